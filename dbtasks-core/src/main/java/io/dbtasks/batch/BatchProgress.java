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
 */
public record BatchProgress(long batchId, int chunks, int done, int failed, int running, int waiting) {
    /** @return chunks neither done nor failed: running or waiting */
    public int remaining() {
        return running + waiting;
    }

    /** @return whether every chunk is done or failed */
    public boolean finished() {
        return remaining() == 0;
    }
}
