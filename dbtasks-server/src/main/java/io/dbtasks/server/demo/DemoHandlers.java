package io.dbtasks.server.demo;

import io.dbtasks.NonRetryableException;
import io.dbtasks.spring.KindHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The demo task kinds, each bound to a typed payload: the three methods of seed 003's order service
 * and a handler that fails on purpose to show retries. Unlike the seed, nothing is looked up by a bean
 * or method name stored in the database: a task names a kind, and only these kinds exist.
 */
@Configuration(proxyBeanMethods = false)
public class DemoHandlers {
    /** Runs {@link OrderService#noParamTask()}; no payload. */
    public static final String NO_PARAM = "order.no-param";
    /** Runs {@link OrderService#syncOrder(Long, String)} with a {@link SyncOrder}. */
    public static final String SYNC = "order.sync";
    /** Runs {@link OrderService#createOrder(OrderDto)} with an {@link OrderDto}. */
    public static final String CREATE = "order.create";
    /** Fails its first {@link FlakyPayload#failTimes()} attempts, then succeeds. */
    public static final String FLAKY = "demo.flaky";

    private static final Logger log = LoggerFactory.getLogger(DemoHandlers.class);

    @Bean
    KindHandler<Void> noParamHandler(OrderService orders) {
        return KindHandler.of(NO_PARAM, Void.class, (ctx, none) -> orders.noParamTask());
    }

    @Bean
    KindHandler<SyncOrder> syncOrderHandler(OrderService orders) {
        return KindHandler.of(SYNC, SyncOrder.class, (ctx, p) -> {
            SyncOrder order = required(p, SYNC);
            orders.syncOrder(order.orderId(), order.operator());
        });
    }

    @Bean
    KindHandler<OrderDto> createOrderHandler(OrderService orders) {
        return KindHandler.of(CREATE, OrderDto.class, (ctx, order) -> orders.createOrder(required(order, CREATE)));
    }

    @Bean
    KindHandler<FlakyPayload> flakyHandler() {
        return KindHandler.of(FLAKY, FlakyPayload.class, (ctx, p) -> {
            FlakyPayload payload = required(p, FLAKY);
            if (ctx.attempt() <= payload.failTimes()) {
                throw new IllegalStateException("demo.flaky fails attempt " + ctx.attempt() + " of its first "
                        + payload.failTimes() + " on purpose");
            }
            log.info("demo.flaky task {} succeeded on attempt {}", ctx.taskId(), ctx.attempt());
        });
    }

    /**
     * A task enqueued without a payload (not through the API, which refuses it) cannot run, and
     * retrying will not help.
     */
    private static <P> P required(P payload, String kind) {
        if (payload == null) {
            throw new NonRetryableException("Task kind '" + kind + "' needs a payload; enqueue it with one");
        }
        return payload;
    }
}
