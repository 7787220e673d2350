package io.dbtasks.server.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * One page of a listing: by offset ({@code page} and {@code total}) or, for a task search, by keyset
 * ({@code next} and no {@code total}).
 *
 * @param items the rows, newest first
 * @param page the zero-based page number; 0 for a keyset page
 * @param size the requested page size
 * @param total rows matching the filter across all pages; absent ({@code null}) for a keyset page
 * @param next a keyset page's cursor for the next page (pass it as {@code before}), absent at the end
 *     and for offset pages
 * @param <T> the row type
 */
public record PageResponse<T>(
        List<T> items,
        int page,
        int size,
        @JsonInclude(JsonInclude.Include.NON_NULL) Long total,
        @JsonInclude(JsonInclude.Include.NON_NULL) Long next) {

    /**
     * An offset page.
     *
     * @param items the rows
     * @param page the zero-based page number
     * @param size the requested page size
     * @param total rows matching across all pages
     */
    public PageResponse(List<T> items, int page, int size, long total) {
        this(items, page, size, Long.valueOf(total), null);
    }
}
