package io.dbtasks.job;

import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A keyset page of one definition's runs, newest (highest run number) first.
 *
 * @param items the runs, newest first; never {@code null}
 * @param nextBeforeRunNo the {@code beforeRunNo} of the next (older) page, or {@code null} on the
 *     last page
 */
public record JobRunRecordPage(
        List<JobRunRecord> items, @Nullable Long nextBeforeRunNo) {
    public JobRunRecordPage {
        items = List.copyOf(items);
    }
}
