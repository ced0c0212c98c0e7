package dev.nvmf.verbs;

/**
 * Something a control thread waits on together with other sources in one {@link EventWaiter}: a CM event channel
 * (CM events), a {@link Device} (asynchronous events) or a {@link CompletionChannel} (CQ events).
 */
public interface EventSource {
    /**
     * A file descriptor that is readable (level-triggered, as poll(2) and epoll(7) see it) for as long as this
     * source has something to hand out, and only then: after the consumer has taken everything (pollEvent(0),
     * pollAsyncEvent(0), nextEvent(0) until nothing is left) it stops being readable. A source that failed for good
     * (a removed device's channel) may stay readable: its calls then report the failure, and the consumer should
     * remove it from the waiter. Owned by the source: never close it. -1 when the source has none.
     */
    int readinessFd();
}
