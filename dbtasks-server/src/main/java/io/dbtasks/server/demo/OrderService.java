package io.dbtasks.server.demo;

import io.dbtasks.StoredText;
import io.dbtasks.spring.TaskMethod;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.stereotype.Service;

/**
 * A sample order service, whose methods the demo tasks run: one without parameters, one with
 * an id and an operator, one with an order object. Here they only log what they did. Thread-safe.
 *
 * <p>The three methods are annotated {@link TaskMethod}, so job definitions (table-defined
 * jobs) may name them as {@code orderService.noParamTask()}, {@code orderService.syncOrder(java.lang.Long,
 * java.lang.String)} and {@code orderService.createOrder(io.dbtasks.server.demo.OrderDto)}; no other
 * method of any bean can be named.
 */
@ConditionalOnBooleanProperty(DemoHandlers.ENABLED)
@Service
public class OrderService {
    private static final Logger log = LoggerFactory.getLogger(OrderService.class);

    /** A sample task without parameters. */
    @TaskMethod("order.no-param")
    public void noParamTask() {
        log.info("No-param task ran");
    }

    /**
     * Synchronises one order (a sample).
     *
     * @param orderId the order to synchronise; not {@code null}
     * @param operator who asked for it; not {@code null}
     */
    @TaskMethod("order.sync")
    public void syncOrder(Long orderId, String operator) {
        log.info("Synchronised order {} for operator {}", orderId, StoredText.forLog(operator));
    }

    /**
     * Creates one order (a sample).
     *
     * @param order the order to create; not {@code null}
     */
    @TaskMethod("order.create")
    public void createOrder(OrderDto order) {
        log.info(
                "Created order {} for user {} over {}",
                order.orderId(),
                StoredText.forLog(order.userName()),
                order.amount());
    }
}
