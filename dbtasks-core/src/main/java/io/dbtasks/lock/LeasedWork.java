package io.dbtasks.lock;

/**
 * Work that runs while its caller holds a {@link Lease}: the body of {@link
 * LeaseLocks#withLock(String, java.time.Duration, LeasedWork)} and of {@link
 * io.dbtasks.once.RunOnceGuards#runOnce(String, java.time.Duration, LeasedWork)}.
 *
 * <p>The lease is renewed in the background while the work runs. If a renewal fails (the lease
 * expired and another holder took over), the thread running the work is interrupted: blocking calls
 * throw {@link InterruptedException}, and long loops should check {@link Thread#isInterrupted()}.
 */
@FunctionalInterface
public interface LeasedWork {
    /**
     * @param lease the grant the work runs under; present {@link Lease#token()} to fence writes
     * @throws Exception anything; the caller records and reports it as documented where the work is
     *     passed in
     */
    void run(Lease lease) throws Exception;
}
