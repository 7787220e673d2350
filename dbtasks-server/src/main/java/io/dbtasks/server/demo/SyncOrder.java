package io.dbtasks.server.demo;

/**
 * The payload of {@code order.sync}: the arguments of {@link OrderService#syncOrder(Long, String)}.
 *
 * @param orderId the order; required
 * @param operator who asked for the synchronisation; required, not blank
 */
public record SyncOrder(Long orderId, String operator) {
    /** @throws IllegalArgumentException if a field is missing, so a bad payload is refused at enqueue */
    public SyncOrder {
        if (orderId == null) {
            throw new IllegalArgumentException("orderId is required");
        }
        if (operator == null || operator.isBlank()) {
            throw new IllegalArgumentException("operator is required");
        }
    }
}
