/**
 * Chunked batches: a batch of N chunks, each done exactly once under
 * a unique {@code (batch, chunk)} record committed with its effects, resumed after a crash with the
 * chunks not yet done, run in parallel across instances, with queryable progress.
 */
@NullMarked
package io.dbtasks.batch;

import org.jspecify.annotations.NullMarked;
