package io.dbtasks;

import java.util.List;

/**
 * One page of a listing.
 *
 * @param items the rows on this page, newest first
 * @param page the zero-based page number
 * @param size the requested page size
 * @param total the number of rows matching the filter across all pages
 * @param <T> the row type
 */
public record Page<T>(List<T> items, int page, int size, long total) {
    public Page {
        items = List.copyOf(items);
    }
}
