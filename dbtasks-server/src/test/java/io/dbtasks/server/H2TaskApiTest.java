package io.dbtasks.server;

import io.dbtasks.testing.TestDatabase;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The REST API on an in-memory H2 database of its own, which starts empty. */
class H2TaskApiTest extends TaskApiContract {
    @BeforeAll
    static void requireDatabase() {
        Assumptions.assumeTrue(TestDatabase.H2.required(), "H2 is not in dbtasks.test.databases");
    }

    @DynamicPropertySource
    static void database(DynamicPropertyRegistry registry) {
        // Not TestDatabase.H2's URL: Spring Boot connects to in-memory H2 as user "sa", the shared
        // test pool as the empty user, and H2 fixes its admin user when the database is created.
        registry.add("spring.datasource.url", () -> "jdbc:h2:mem:dbtasks_server_api;DB_CLOSE_DELAY=-1");
    }
}
