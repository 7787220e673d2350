package io.dbtasks.spring;

import io.dbtasks.TaskKind;
import java.util.Objects;
import java.util.function.Function;

/**
 * Derives the concurrency key of one kind's tasks from their payload, so that code enqueueing them
 * need not set it: declaring it as a Spring bean is enough. {@link TaskTemplate} asks it for every
 * task of {@link #kind()} enqueued without a key ({@code TaskRequest.concurrencyKey} null); a key set
 * on the request wins. Tasks enqueued on {@link io.dbtasks.DbTasks} directly are not seen by it.
 *
 * <pre>{@code
 * @Bean
 * ConcurrencyKeyResolver<InvoiceSync> invoiceSyncKey() {
 *     return ConcurrencyKeyResolver.of("invoice.sync", InvoiceSync.class, InvoiceSync::tenantId);
 * }
 * }</pre>
 *
 * <p>Called on the enqueueing thread, possibly by many threads at once: implementations must be
 * thread-safe. {@link #kind()} and {@link #payloadType()} are read once, at startup. Two resolvers
 * for one kind fail the startup.
 *
 * @param <P> the payload type
 */
public interface ConcurrencyKeyResolver<P> {
    /** @return the kind whose tasks this resolver keys; never {@code null} */
    String kind();

    /** @return the payload class the kind's tasks are enqueued with; never {@code null} */
    Class<P> payloadType();

    /**
     * @param payload the payload of a task being enqueued, never {@code null}
     * @return its concurrency key (1 to {@value io.dbtasks.TaskRequest#MAX_KEY_LENGTH} characters,
     *     no {@code *}), or {@code null} for none
     */
    String concurrencyKey(P payload);

    /**
     * @param kind the kind
     * @param payloadType its payload class
     * @param key the key of a payload, or {@code null} for none; thread-safe
     * @param <P> the payload type
     * @return a resolver
     * @throws NullPointerException if an argument is {@code null}
     */
    static <P> ConcurrencyKeyResolver<P> of(String kind, Class<P> payloadType, Function<? super P, String> key) {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(payloadType, "payloadType");
        Objects.requireNonNull(key, "key");
        return new ConcurrencyKeyResolver<>() {
            @Override
            public String kind() {
                return kind;
            }

            @Override
            public Class<P> payloadType() {
                return payloadType;
            }

            @Override
            public String concurrencyKey(P payload) {
                return key.apply(payload);
            }

            @Override
            public String toString() {
                return "ConcurrencyKeyResolver[" + kind + ", " + payloadType.getSimpleName() + "]";
            }
        };
    }

    /**
     * @param kind the kind and its payload type
     * @param key the key of a payload, or {@code null} for none; thread-safe
     * @param <P> the payload type
     * @return a resolver
     * @throws NullPointerException if an argument is {@code null}
     */
    static <P> ConcurrencyKeyResolver<P> of(TaskKind<P> kind, Function<? super P, String> key) {
        return of(kind.name(), kind.payloadType(), key);
    }
}
