package io.dbtasks.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.dbtasks.DbTasksException;
import io.dbtasks.lock.Lease;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Fencing tokens after a failover to a replica that lags: the replica had the counter, but not its
 * last increments, when it was promoted. Each grant must still be above every token handed out
 * before, or two holders share a token and the guard that fences writes by it cannot tell them
 * apart. Two Redis servers of the test's own; never the shared one.
 */
class RedisTokenFailoverTest {
    private static final String NAME = "job";
    private static final String PREFIX = "failover:";

    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    @Test
    void grantsOfAReplicaPromotedBehindThePrimaryRepeatNoToken() throws Exception {
        OwnRedisServer primary = OwnRedisServer.start();
        closeables.add(primary);
        OwnRedisServer replica = OwnRedisServer.replicaOf(primary);
        closeables.add(replica);
        StatefulRedisConnection<String, String> toPrimary = connect(primary);
        StatefulRedisConnection<String, String> toReplica = connect(replica);
        RedisLeaseLocks onPrimary = new RedisLeaseLocks(toPrimary, PREFIX, "primary-side");
        closeables.add(onPrimary);

        List<Long> before = grants(onPrimary, 5);
        String counter = PREFIX + "{" + NAME + "}:token";
        await().atMost(Duration.ofSeconds(10))
                .until(() -> Objects.equals(
                        toReplica.sync().get(counter), toPrimary.sync().get(counter)));
        // The replica falls behind: promoted now, it never receives the primary's next increments.
        toReplica.sync().replicaofNoOne();
        List<Long> lost = grants(onPrimary, 5);

        RedisLeaseLocks onReplica = new RedisLeaseLocks(toReplica, PREFIX, "replica-side");
        closeables.add(onReplica);
        List<Long> after = grants(onReplica, 5);

        List<Long> all = new ArrayList<>(before);
        all.addAll(lost);
        all.addAll(after);
        System.out.println(
                "REDIS FAILOVER tokens: primary " + before + " then " + lost + "; promoted replica " + after);
        assertThat(new HashSet<>(all)).as("distinct tokens of " + all).hasSize(all.size());
        assertThat(after.get(0)).as("first grant of the promoted replica").isGreaterThan(lost.get(lost.size() - 1));
        assertThat(after).isSorted();
    }

    /**
     * The first command of a new instance may take longer than the command timeout without Redis
     * being at fault (a cold JVM); a Redis that stalls for a second at that moment stands in for it.
     * Once warm, a stall fails within the command timeout again.
     */
    @Test
    void firstCallWaitsOutTheWarmUpAndLaterCallsKeepTheCommandTimeout() throws Exception {
        OwnRedisServer server = OwnRedisServer.start();
        closeables.add(server);
        StatefulRedisConnection<String, String> connection = connect(server);
        connection.sync().ping();
        server.freeze(1);
        RedisLeaseLocks locks = new RedisLeaseLocks(connection, PREFIX, "warm-up", Duration.ofMillis(200));
        closeables.add(locks);
        assertThat(locks.tryAcquire(NAME, Duration.ofSeconds(10)))
                .as("the first grant")
                .isPresent();

        server.freeze(2);
        long start = System.nanoTime();
        assertThatThrownBy(() -> locks.tryAcquire("other", Duration.ofSeconds(10)))
                .isInstanceOf(DbTasksException.class)
                .hasMessageContaining("no answer within 200 ms");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis(1500));
    }

    private StatefulRedisConnection<String, String> connect(OwnRedisServer server) {
        RedisClient client = RedisClient.create(server.url());
        closeables.add(() -> client.shutdown(Duration.ZERO, Duration.ofSeconds(2)));
        StatefulRedisConnection<String, String> c = client.connect();
        closeables.add(c);
        return c;
    }

    private static List<Long> grants(RedisLeaseLocks locks, int n) {
        List<Long> tokens = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Lease lease = locks.tryAcquire(NAME, Duration.ofSeconds(10)).orElseThrow();
            tokens.add(lease.token());
            assertThat(locks.release(lease)).isTrue();
        }
        return tokens;
    }
}
