package io.dbtasks.server.api;

import io.dbtasks.DbTasks;
import io.dbtasks.ForeignTasks;
import io.swagger.v3.oas.annotations.Operation;
import java.util.List;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The due tasks of this server's queues that its engine does not claim ({@code GET
 * /api/foreign-tasks}): a kind it has no handler for, or a job target it does not allow-list. They
 * wait for an engine that can run them; {@code runnableElsewhere: false} says no live engine of the
 * queue can, and they end FAILED once that has lasted {@code dbtasks.unclaimable-grace}.
 */
@RestController
@RequestMapping("/api")
public class ForeignTaskController {
    private final DbTasks dbTasks;

    /** @param dbTasks the server's engine */
    public ForeignTaskController(DbTasks dbTasks) {
        this.dbTasks = dbTasks;
    }

    /** @return the groups of the engine's last check, by queue, kind and job target */
    @GetMapping("/foreign-tasks")
    @Operation(
            summary = "Due tasks this server's engine leaves to other engines",
            description = "By queue, kind and job target, as of the engine's last check. runnableElsewhere: whether a"
                    + " live engine working the queue advertises the kind (and target) in its worker row; when none"
                    + " does, the tasks end FAILED with the reason once that has lasted dbtasks.unclaimable-grace.")
    public List<ForeignTasks> foreignTasks() {
        return dbTasks.foreignTasks();
    }
}
