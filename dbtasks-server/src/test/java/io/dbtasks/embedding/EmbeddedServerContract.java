package io.dbtasks.embedding;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.resttestclient.autoconfigure.AutoConfigureRestTestClient;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.http.MediaType;
import org.springframework.test.context.TestPropertySource;
import org.springframework.test.web.servlet.client.EntityExchangeResult;
import org.springframework.test.web.servlet.client.RestTestClient;
import tools.jackson.databind.JsonNode;

/**
 * An application of its own (package {@code io.dbtasks.embedding}, outside the server's) that depends
 * on the server library and imports {@code DbTasksServerConfiguration} ({@link ShopApplication}): the REST API serves the
 * application's kind, and none of the demo's kinds or job targets exist. Run once per database by
 * the subclasses, each of which points {@code spring.datasource.url} at its database.
 */
@SpringBootTest(
        classes = ShopApplication.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"dbtasks.server.demo.enabled=false", "dbtasks.poll-interval=50ms", "dbtasks.shutdown-timeout=2s"})
@TestPropertySource(locations = "classpath:test-users.properties")
@AutoConfigureRestTestClient
abstract class EmbeddedServerContract {
    private static final Duration WAIT = Duration.ofSeconds(20);

    @Autowired
    RestTestClient client;

    @BeforeEach
    void authenticate() {
        client = client.mutate()
                .defaultHeaders(h -> h.setBasicAuth("admin", "admin-secret"))
                .build();
    }

    @Test
    void theApiRunsTheApplicationsKindAndHasNoDemoKinds() {
        long orderId = System.nanoTime();
        EntityExchangeResult<JsonNode> created = client.post()
                .uri("/api/tasks")
                .contentType(MediaType.APPLICATION_JSON)
                .body("{\"kind\":\"shop.ship\",\"payload\":{\"orderId\":" + orderId + "}}")
                .exchange()
                .expectBody(JsonNode.class)
                .returnResult();
        assertThat(created.getStatus().value())
                .as("POST of the application's kind: %s", created.getResponseBody())
                .isEqualTo(201);
        long id = created.getResponseBody().path("id").asLong();

        await().atMost(WAIT).untilAsserted(() -> {
            JsonNode task = client.get()
                    .uri("/api/tasks/" + id)
                    .exchange()
                    .expectStatus()
                    .isOk()
                    .expectBody(JsonNode.class)
                    .returnResult()
                    .getResponseBody();
            assertThat(task.path("status").asString()).isEqualTo("SUCCEEDED");
        });
        assertThat(Shipping.SHIPPED).containsOnlyOnce(orderId);

        String refused = client.post()
                .uri("/api/tasks")
                .contentType(MediaType.APPLICATION_JSON)
                .body("{\"kind\":\"order.create\",\"payload\":{\"orderId\":7,\"userName\":\"Ann\",\"amount\":12.5}}")
                .exchange()
                .expectStatus()
                .isBadRequest()
                .expectBody(String.class)
                .returnResult()
                .getResponseBody();
        assertThat(refused).contains("Unknown task kind 'order.create'");

        String targets = client.get()
                .uri("/api/job-targets")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(String.class)
                .returnResult()
                .getResponseBody();
        assertThat(targets).doesNotContain("orderService");
    }
}
