package io.dbtasks.server.api;

import java.util.List;

/**
 * One page of a listing.
 *
 * @param items the rows, newest first
 * @param page the zero-based page number
 * @param size the requested page size
 * @param total rows matching the filter across all pages
 * @param <T> the row type
 */
public record PageResponse<T>(List<T> items, int page, int size, long total) {}
