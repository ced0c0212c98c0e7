package dev.nvmf.target.daemon;

import org.agrona.concurrent.AgentInvoker;
import org.agrona.concurrent.AgentTerminationException;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The backend agent, driven by an AgentInvoker: tasks from any thread run on the agent, in order, once. */
class BackendAgentTest {
    private final List<Throwable> errors = new ArrayList<>();

    @Test
    void tasksFromOtherThreadsRunOnlyOnTheAgentInOrder() throws Exception {
        BackendAgent agent = new BackendAgent();
        AgentInvoker invoker = new AgentInvoker(errors::add, null, agent);
        invoker.start();
        List<String> ran = new ArrayList<>();
        List<CompletableFuture<Void>> done = new ArrayList<>();
        Thread invoking = Thread.currentThread();
        Thread other = new Thread(() -> {
            for (int i = 0; i < 3; i++) {
                String name = "task " + i;
                done.add(agent.submit(name, () -> ran.add(name + (Thread.currentThread() == invoking
                        ? " on the agent" : " elsewhere"))));
            }
        }, "size-monitor");
        other.start();
        other.join();
        assertEquals(List.of(), ran, "nothing runs on the submitting thread");
        assertFalse(done.get(0).isDone());

        assertEquals(3, invoker.invoke());
        assertEquals(List.of("task 0 on the agent", "task 1 on the agent", "task 2 on the agent"), ran);
        assertTrue(done.stream().allMatch(CompletableFuture::isDone));
        assertEquals(0, invoker.invoke(), "each task runs once");
        assertEquals(List.of(), errors);
    }

    @Test
    void aTaskThatThrowsIsLoggedAndTheNextOnesStillRun() {
        BackendAgent agent = new BackendAgent();
        AgentInvoker invoker = new AgentInvoker(errors::add, null, agent);
        invoker.start();
        CompletableFuture<Void> bad = agent.submit("closing rbd:rbd/x", () -> {
            throw new IllegalStateException("rbd_close: EIO");
        });
        boolean[] after = {false};
        agent.submit("next", () -> after[0] = true);
        assertEquals(2, invoker.invoke());
        assertTrue(bad.isDone() && !bad.isCompletedExceptionally(), "the waiter is released either way");
        assertTrue(after[0]);
        assertEquals(List.of(), errors, "contained in the agent, not the runner's error handler");
        assertFalse(invoker.isClosed());
    }

    @Test
    void retireEndsTheAgentAfterWhatWasQueuedBefore() {
        BackendAgent agent = new BackendAgent();
        AgentInvoker invoker = new AgentInvoker(errors::add, null, agent);
        invoker.start();
        boolean[] before = {false};
        boolean[] afterRetire = {false};
        agent.submit("last close", () -> before[0] = true);
        agent.retire();
        agent.submit("too late", () -> afterRetire[0] = true);
        invoker.invoke();
        assertTrue(before[0], "what was queued before retire ran");
        assertTrue(invoker.isClosed(), "the agent ended");
        assertFalse(afterRetire[0]);
        assertEquals(1, errors.size());
        assertTrue(errors.get(0) instanceof AgentTerminationException);
    }
}
