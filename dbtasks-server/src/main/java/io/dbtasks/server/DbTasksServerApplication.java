package io.dbtasks.server;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * The runnable dbtasks service: the REST API under {@code /api}, the workers of the configured
 * queues, and the demo handlers of the sample order service. Runs on an H2 file database under {@code ./data} unless
 * {@code spring.datasource.*} names PostgreSQL or MariaDB.
 */
@SpringBootApplication
public class DbTasksServerApplication {
    /**
     * Starts the server.
     *
     * @param args Spring Boot command-line arguments, for example {@code --server.port=9090}
     */
    public static void main(String[] args) {
        SpringApplication.run(DbTasksServerApplication.class, args);
    }
}
