package dev.nvmf.target.daemon.selftest;

/** A selftest check that failed, with what went wrong in the operator's words. */
final class CheckFailure extends RuntimeException {
    CheckFailure(String message) {
        super(message);
    }
}
