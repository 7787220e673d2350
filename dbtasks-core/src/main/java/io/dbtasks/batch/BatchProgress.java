package io.dbtasks.batch;

/**
 * How far a batch is. {@code done + failed + running + waiting = chunks}.
 *
 * @param batchId the batch
 * @param chunks its number of chunks
 * @param done chunks whose done record committed
 * @param failed chunks not done whose task is FAILED or CANCELLED (or was deleted by retention)
 * @param running chunks not done whose task is RUNNING
 * @param waiting chunks not done whose task is PENDING (due, or waiting to retry)
 * @param rescuePending of the {@code running} chunks, those whose lease has expired by the database
 *     clock: their instance stopped (died, or lost the database) and the next rescue returns them to
 *     waiting, so they are not being worked on
 */
public record BatchProgress(
        long batchId, int chunks, int done, int failed, int running, int waiting, int rescuePending) {
    /**
     * Progress with no chunk awaiting rescue.
     *
     * @param batchId the batch
     * @param chunks its number of chunks
     * @param done chunks done
     * @param failed chunks failed
     * @param running chunks running
     * @param waiting chunks waiting
     */
    public BatchProgress(long batchId, int chunks, int done, int failed, int running, int waiting) {
        this(batchId, chunks, done, failed, running, waiting, 0);
    }

    /** @return chunks neither done nor failed: running or waiting */
    public int remaining() {
        return running + waiting;
    }

    /** @return whether every chunk is done or failed */
    public boolean finished() {
        return remaining() == 0;
    }
}
