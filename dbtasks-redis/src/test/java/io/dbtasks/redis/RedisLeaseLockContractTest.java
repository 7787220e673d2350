package io.dbtasks.redis;

import io.dbtasks.contract.LeaseLockContract;
import io.dbtasks.lock.LeaseLocks;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/** The lease-lock contract that the database locks pass, on Redis. */
class RedisLeaseLockContractTest extends LeaseLockContract {
    private final String prefix = TestRedis.freshPrefix();
    private final List<RedisLeaseLocks> stores = new ArrayList<>();

    @BeforeEach
    void requireRedis() {
        TestRedis.assumeRequired();
    }

    @AfterEach
    void closeStores() {
        stores.forEach(RedisLeaseLocks::close);
    }

    @Override
    protected LeaseLocks locksOf(String process) {
        RedisLeaseLocks locks = new RedisLeaseLocks(TestRedis.connection(), prefix, process);
        stores.add(locks);
        return locks;
    }
}
