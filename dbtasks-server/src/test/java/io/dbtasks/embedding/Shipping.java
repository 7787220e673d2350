package io.dbtasks.embedding;

import io.dbtasks.TaskContext;
import io.dbtasks.spring.TaskListener;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.springframework.stereotype.Component;

/** The application's handler of {@code shop.ship}; records the orders it shipped. */
@Component
class Shipping {
    /** The application's payload. */
    record Ship(long orderId) {}

    static final List<Long> SHIPPED = new CopyOnWriteArrayList<>();

    @TaskListener("shop.ship")
    void ship(Ship ship, TaskContext ctx) {
        SHIPPED.add(ship.orderId());
    }
}
