package io.dbtasks.server;

import io.dbtasks.testing.TestDatabase;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** Text validation on an in-memory H2 database of its own. */
class H2TextValidationTest extends TextValidationContract {
    @BeforeAll
    static void requireDatabase() {
        Assumptions.assumeTrue(TestDatabase.H2.required(), "H2 is not in dbtasks.test.databases");
    }

    @DynamicPropertySource
    static void database(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", () -> "jdbc:h2:mem:dbtasks_server_text;DB_CLOSE_DELAY=-1");
    }
}
