package io.dbtasks.server.demo;

import io.dbtasks.NonRetryableException;
import io.dbtasks.TaskKind;
import io.dbtasks.spring.KindHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The demo task kinds, each bound to a typed payload: the three methods of the sample order service
 * and a handler that fails on purpose to show retries. Nothing is looked up by a bean
 * or method name stored in the database: a task names a kind, and only these kinds exist.
 *
 * <p>Every demo bean (these handlers, {@link OrderService}'s job targets, {@link SeedJobs} and {@link
 * DemoOrderBatch}) exists only while {@value #ENABLED} is {@code true}. The standalone server's {@code
 * application.yml} sets it; an application that embeds the server leaves it unset and gets none of
 * the demo kinds or targets.
 */
@ConditionalOnBooleanProperty(DemoHandlers.ENABLED)
@Configuration(proxyBeanMethods = false)
public class DemoHandlers {
    /** The property that turns the demo on: {@code true} adds the demo kinds, targets, jobs and batch. */
    public static final String ENABLED = "dbtasks.server.demo.enabled";

    /** Runs {@link OrderService#noParamTask()}; no payload. */
    public static final TaskKind<Void> NO_PARAM = TaskKind.of("order.no-param", Void.class);
    /** Runs {@link OrderService#syncOrder(Long, String)} with a {@link SyncOrder}. */
    public static final TaskKind<SyncOrder> SYNC = TaskKind.of("order.sync", SyncOrder.class);
    /** Runs {@link OrderService#createOrder(OrderDto)} with an {@link OrderDto}. */
    public static final TaskKind<OrderDto> CREATE = TaskKind.of("order.create", OrderDto.class);
    /** Fails its first {@link FlakyPayload#failTimes()} attempts, then succeeds. */
    public static final TaskKind<FlakyPayload> FLAKY = TaskKind.of("demo.flaky", FlakyPayload.class);

    private static final Logger log = LoggerFactory.getLogger(DemoHandlers.class);

    @Bean
    KindHandler<Void> noParamHandler(OrderService orders) {
        return KindHandler.of(NO_PARAM, (ctx, none) -> orders.noParamTask());
    }

    @Bean
    KindHandler<SyncOrder> syncOrderHandler(OrderService orders) {
        return KindHandler.of(SYNC, (ctx, p) -> {
            SyncOrder order = required(p, SYNC);
            orders.syncOrder(order.orderId(), order.operator());
        });
    }

    @Bean
    KindHandler<OrderDto> createOrderHandler(OrderService orders) {
        return KindHandler.of(CREATE, (ctx, order) -> orders.createOrder(required(order, CREATE)));
    }

    @Bean
    KindHandler<FlakyPayload> flakyHandler() {
        return KindHandler.of(FLAKY, (ctx, p) -> {
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
    private static <P> P required(P payload, TaskKind<P> kind) {
        if (payload == null) {
            throw new NonRetryableException("Task kind '" + kind.name() + "' needs a payload; enqueue it with one");
        }
        return payload;
    }
}
