package io.dbtasks.server;

import io.dbtasks.testing.TestDatabase;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** Payloads hidden from viewers on an in-memory H2 database of its own. */
class H2PayloadVisibilityTest extends PayloadVisibilityContract {
    @BeforeAll
    static void requireDatabase() {
        Assumptions.assumeTrue(TestDatabase.H2.required(), "H2 is not in dbtasks.test.databases");
    }

    @DynamicPropertySource
    static void database(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", () -> "jdbc:h2:mem:dbtasks_server_visibility;DB_CLOSE_DELAY=-1");
    }
}
