package io.dbtasks.server.demo;

import java.math.BigDecimal;

/**
 * The payload of {@code order.create}: a sample order, as a record. The amount is a
 * {@link BigDecimal}, since it is money.
 *
 * @param orderId the order; required
 * @param userName the customer; required, not blank
 * @param amount the order total; required, not negative
 */
public record OrderDto(Long orderId, String userName, BigDecimal amount) {
    /** @throws IllegalArgumentException if a field is missing or the amount is negative */
    public OrderDto {
        if (orderId == null) {
            throw new IllegalArgumentException("orderId is required");
        }
        if (userName == null || userName.isBlank()) {
            throw new IllegalArgumentException("userName is required");
        }
        if (amount == null) {
            throw new IllegalArgumentException("amount is required");
        }
        if (amount.signum() < 0) {
            throw new IllegalArgumentException("amount must not be negative, got " + amount);
        }
    }
}
