package io.dbtasks.spring;

import io.dbtasks.TaskHandler;
import java.util.Objects;

/**
 * A {@link TaskHandler} that names its own kind and payload type, so that declaring it as a Spring
 * bean is enough to register it: the auto-configuration registers every {@code KindHandler} bean on
 * the {@link io.dbtasks.DbTasks} it builds. Two beans with the same {@link #kind()} fail the startup.
 *
 * <p>Implementations are called on worker threads, possibly many at once, so they must be
 * thread-safe; {@link #kind()} and {@link #payloadType()} are read once, at startup, and must not
 * change.
 *
 * <p>The handler beans are created while the {@code DbTasks} bean is built, so a handler that
 * enqueues follow-up tasks must not take {@code DbTasks} as a constructor argument (that is a
 * dependency cycle); inject {@code ObjectProvider<DbTasks>} and resolve it in {@link #handle}.
 *
 * @param <P> the payload type, read from the task's JSON by the application's {@code JsonMapper};
 *     {@link Void} for kinds without a payload
 */
public interface KindHandler<P> extends TaskHandler<P> {
    /**
     * @return the stable kind name tasks are enqueued under, for example {@code "order.sync"}; never
     *     {@code null} or blank
     */
    String kind();

    /**
     * @return the class the JSON payload is read as: a record or bean without polymorphic typing, or
     *     {@code Void.class} for none; never {@code null}
     */
    Class<P> payloadType();

    /**
     * Wraps a lambda or method reference as a {@code KindHandler}, for {@code @Bean} methods.
     *
     * @param kind the stable kind name
     * @param payloadType the payload class, {@code Void.class} for none
     * @param handler the work; thread-safe
     * @param <P> the payload type
     * @return a handler reporting {@code kind} and {@code payloadType}
     * @throws NullPointerException if an argument is {@code null}
     */
    /**
     * A handler bean for a typed kind.
     *
     * @param kind the kind and its payload type
     * @param handler the handler, thread-safe
     * @param <P> the payload type
     * @return the handler bean
     */
    static <P> KindHandler<P> of(io.dbtasks.TaskKind<P> kind, TaskHandler<P> handler) {
        return of(kind.name(), kind.payloadType(), handler);
    }

    static <P> KindHandler<P> of(String kind, Class<P> payloadType, TaskHandler<P> handler) {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(payloadType, "payloadType");
        Objects.requireNonNull(handler, "handler");
        return new KindHandler<>() {
            @Override
            public String kind() {
                return kind;
            }

            @Override
            public Class<P> payloadType() {
                return payloadType;
            }

            @Override
            public void handle(io.dbtasks.TaskContext context, P payload) throws Exception {
                handler.handle(context, payload);
            }

            @Override
            public String toString() {
                return "KindHandler[" + kind + ", " + payloadType.getSimpleName() + "]";
            }
        };
    }
}
