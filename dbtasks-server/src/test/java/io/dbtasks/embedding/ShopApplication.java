package io.dbtasks.embedding;

import io.dbtasks.server.DbTasksServerConfiguration;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Import;

/**
 * An application of its own, outside the server's package, that embeds the server: its handlers
 * ({@link Shipping}) and the server's beans, imported.
 */
@SpringBootApplication
@Import(DbTasksServerConfiguration.class)
class ShopApplication {}
