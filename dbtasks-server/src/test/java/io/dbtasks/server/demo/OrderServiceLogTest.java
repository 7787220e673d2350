package io.dbtasks.server.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.testing.LogCapture;
import java.math.BigDecimal;
import org.junit.jupiter.api.Test;

/** The demo handlers log what a client sent; a line break in it must not start a forged log line. */
class OrderServiceLogTest {
    private static final String FORGED = "ann\r\n2026-11-26 12:00:00.000  INFO [main] Admin password changed\u2028x";

    @Test
    void aLineBreakInADemoFieldCannotForgeALogLine() {
        try (LogCapture log = LogCapture.of(OrderService.class)) {
            OrderService orders = new OrderService();
            orders.syncOrder(1L, FORGED);
            orders.createOrder(new OrderDto(2L, FORGED, BigDecimal.ONE));
            assertThat(log.messages())
                    .hasSize(2)
                    .allSatisfy(m ->
                            assertThat(m).doesNotContain("\n", "\r", "\u2028").contains("ann\\r\\n2026-11-26"));
        }
    }
}
