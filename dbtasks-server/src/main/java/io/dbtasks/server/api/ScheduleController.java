package io.dbtasks.server.api;

import io.dbtasks.DbTasks;
import io.dbtasks.Page;
import io.dbtasks.schedule.ScheduleInfo;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.tags.Tag;
import java.util.List;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** The recurring schedules ({@code GET /api/schedules}), read through {@link DbTasks#schedules()}. */
@RestController
@RequestMapping("/api")
@Tag(name = "Schedules")
public class ScheduleController {
    private static final int MAX_PAGE_SIZE = 500;

    private final DbTasks dbTasks;

    /** @param dbTasks the engine, whose database holds the schedules */
    public ScheduleController(DbTasks dbTasks) {
        this.dbTasks = dbTasks;
    }

    /**
     * @param page the page, from 0
     * @param size schedules per page, 1 to 500
     * @return a page of schedules in name order
     * @throws BadRequestException (400) for a page below 0 or a size out of range
     */
    @Operation(summary = "List the recurring schedules", description = "In name order, with next and last slots.")
    @GetMapping("/schedules")
    public PageResponse<ScheduleResponse> list(
            @RequestParam(defaultValue = "0") int page, @RequestParam(defaultValue = "20") int size) {
        if (page < 0) {
            throw new BadRequestException("'page' must be 0 or more, got " + page);
        }
        if (size < 1 || size > MAX_PAGE_SIZE) {
            throw new BadRequestException("'size' must be 1 to " + MAX_PAGE_SIZE + ", got " + size);
        }
        Page<ScheduleInfo> result = dbTasks.schedules().list(page, size);
        List<ScheduleResponse> items =
                result.items().stream().map(ScheduleResponse::of).toList();
        return new PageResponse<>(items, result.page(), result.size(), result.total());
    }
}
