package io.dbtasks.job;

import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One keyset page of definitions, in id order.
 *
 * @param items the definitions on this page
 * @param nextAfterId the id to pass as {@code afterId} for the next page, or {@code null} when this
 *     is the last page
 */
public record JobPage(List<StoredJob> items, @Nullable Long nextAfterId) {
    public JobPage {
        items = List.copyOf(items);
    }
}
