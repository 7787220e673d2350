package io.dbtasks.server.demo;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Service;

/**
 * The order service of seed 003, whose methods the demo tasks run: one without parameters, one with
 * an id and an operator, one with an order object. Here they only log what they did. Thread-safe.
 */
@Service
public class OrderService {
    private static final Logger log = LoggerFactory.getLogger(OrderService.class);

    /** The seed's {@code noParamTask()}. */
    public void noParamTask() {
        log.info("No-param task ran");
    }

    /**
     * The seed's {@code syncOrder(Long, String)}.
     *
     * @param orderId the order to synchronise; not {@code null}
     * @param operator who asked for it; not {@code null}
     */
    public void syncOrder(Long orderId, String operator) {
        log.info("Synchronised order {} for operator {}", orderId, operator);
    }

    /**
     * The seed's {@code createOrder(OrderDTO)}.
     *
     * @param order the order to create; not {@code null}
     */
    public void createOrder(OrderDto order) {
        log.info("Created order {} for user {} over {}", order.orderId(), order.userName(), order.amount());
    }
}
