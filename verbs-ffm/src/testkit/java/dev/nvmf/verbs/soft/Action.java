package dev.nvmf.verbs.soft;

/** A piece of fabric work due at a time; reusable (the data path reschedules the same objects). */
abstract class Action {
    long due;
    long seq;
    boolean scheduled;
    /** Scheduled with wire latency, which a blocking caller may cut short. */
    boolean wire;

    abstract void run();

    static int compare(Action a, Action b) {
        int c = Long.compare(a.due, b.due);
        return c != 0 ? c : Long.compare(a.seq, b.seq);
    }

    static Action of(Runnable r) {
        return new Action() {
            @Override
            void run() { r.run(); }
        };
    }
}
