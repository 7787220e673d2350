package io.dbtasks.server.dashboard;

import io.dbtasks.DbTasks;
import io.dbtasks.StoredText;
import io.dbtasks.limit.KeyLoad;
import io.dbtasks.limit.Limit;
import io.dbtasks.limit.Limits;
import io.dbtasks.limit.Rate;
import jakarta.servlet.http.HttpServletResponse;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.ModelAttribute;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.servlet.mvc.support.RedirectAttributes;

/**
 * The dashboard's limits page, {@code /dashboard/limits}: the concurrency and rate limits per
 * concurrency key, the queue-wide rates and the queues set fair ({@link DbTasks#limits()}), the
 * running and waiting tasks of the busiest keys of one queue, and forms to set, replace and remove a
 * limit or a queue-wide rate and to set a queue fair or plain again.
 *
 * <p>Who may do what is {@code RoleRules}' business, as for every dashboard action: viewers read,
 * operators set limits, queue-wide rates and fairness, and removing a limit or a queue-wide rate (a
 * {@code POST} to {@code .../delete}) needs the admin role, as {@code DELETE /api/limits} does. The audit filter records every form POST. A
 * value the core refuses is answered 400 with the core's message on this page, with nothing stored.
 */
@Controller
public class LimitsPageController {
    /** The most keys of one queue the page lists, busiest first. */
    static final int KEY_ROWS = 100;

    private final DbTasks dbTasks;
    private final DashboardController dashboard;
    private final OverviewSnapshots snapshots;

    /**
     * @param dbTasks the engine, whose database holds the limits
     * @param dashboard the dashboard, whose caller model every page shares
     * @param snapshots the overview numbers, for the names of the queues
     */
    public LimitsPageController(DbTasks dbTasks, DashboardController dashboard, OverviewSnapshots snapshots) {
        this.dbTasks = dbTasks;
        this.dashboard = dashboard;
        this.snapshots = snapshots;
    }

    /** @param model gets what every dashboard page knows about the caller */
    @ModelAttribute
    public void caller(Model model) {
        dashboard.caller(model);
    }

    /**
     * @param queue the queue whose keys to show, or {@code null} for none
     * @param model the page's model
     * @return the limits page
     */
    @GetMapping("/dashboard/limits")
    public String limits(@RequestParam(required = false) String queue, Model model) {
        String shown = queue == null || queue.isBlank() ? null : queue;
        if (shown != null) {
            check("queue", shown);
        }
        return page(model, shown, null);
    }

    /**
     * Sets a limit, replacing the one of the same queue and key pattern. Blank numbers are absent; as
     * through the API, a limit needs a {@code maxRunning}, FIFO or a rate, FIFO alone means {@code
     * maxRunning} 1, and a rate alone bounds no tasks running at once.
     *
     * @param queue the queue
     * @param keyPattern an exact key, a pattern with {@code *}, or {@code *} for every key
     * @param maxRunning at most this many tasks of one key RUNNING at once, or blank
     * @param fifo {@code true} (or {@code on}) to run each key's tasks one at a time in enqueue order
     * @param rateStarts at most this many starts of one key per {@code ratePeriod}, or blank
     * @param ratePeriod the rate's window, such as {@code 1s}, {@code 500ms}, {@code 1m} or {@code
     *     PT1S} (a bare number is milliseconds), or blank
     * @param model the page's model, when the input is refused
     * @param response to set 400 on, when the input is refused
     * @param flash the message for the page redirected to
     * @return a redirect to the page, or the page with the error (400)
     */
    @PostMapping("/dashboard/limits")
    public String set(
            @RequestParam(required = false) String queue,
            @RequestParam(required = false) String keyPattern,
            @RequestParam(required = false) String maxRunning,
            @RequestParam(required = false) String fifo,
            @RequestParam(required = false) String rateStarts,
            @RequestParam(required = false) String ratePeriod,
            Model model,
            HttpServletResponse response,
            RedirectAttributes flash) {
        Limit limit;
        try {
            limit = limit(queue, keyPattern, maxRunning, fifo, rateStarts, ratePeriod);
        } catch (IllegalArgumentException e) {
            response.setStatus(HttpStatus.BAD_REQUEST.value());
            model.addAttribute(
                    "form", new LimitForm(queue, keyPattern, maxRunning, isTrue(fifo), rateStarts, ratePeriod));
            return page(model, null, e.getMessage());
        }
        dbTasks.limits().set(limit);
        flash.addFlashAttribute(
                "message",
                "Set limit of queue " + limit.queue() + ", keys " + limit.keyPattern() + ": " + describe(limit)
                        + " (in force on every engine within " + Limits.REFRESH_MILLIS + " ms)");
        flash.addAttribute("queue", limit.queue());
        return "redirect:/dashboard/limits";
    }

    /**
     * @param queue the queue
     * @param keyPattern the key pattern exactly as set
     * @param model the page's model, when there is no such limit
     * @param response to set 404 on, when there is no such limit
     * @param flash the message for the page redirected to
     * @return a redirect to the page, or the page with the error (404)
     */
    @PostMapping("/dashboard/limits/delete")
    public String remove(
            @RequestParam(required = false) String queue,
            @RequestParam(required = false) String keyPattern,
            Model model,
            HttpServletResponse response,
            RedirectAttributes flash) {
        String q = required("queue", queue);
        String pattern = required("keyPattern", keyPattern);
        if (!dbTasks.limits().remove(q, pattern)) {
            response.setStatus(HttpStatus.NOT_FOUND.value());
            return page(model, null, "No limit of queue " + q + " has the key pattern " + pattern);
        }
        flash.addFlashAttribute(
                "message",
                "Removed the limit of queue " + q + ", keys " + pattern + " (lifted on every engine within "
                        + Limits.REFRESH_MILLIS + " ms)");
        return "redirect:/dashboard/limits";
    }

    /**
     * Sets the queue-wide rate of a queue, replacing the one it has: at most so many starts of the
     * whole queue, whatever the tasks' keys, per period.
     *
     * @param queue the queue
     * @param rateStarts at most this many starts of the queue per {@code ratePeriod}, at least 1
     * @param ratePeriod the window, such as {@code 1s}, {@code 500ms}, {@code 1m} or {@code PT1S} (a
     *     bare number is milliseconds)
     * @param model the page's model, when the input is refused
     * @param response to set 400 on, when the input is refused
     * @param flash the message for the page redirected to
     * @return a redirect to the page, or the page with the error (400)
     */
    @PostMapping("/dashboard/limits/queue-rate")
    public String setQueueRate(
            @RequestParam(required = false) String queue,
            @RequestParam(required = false) String rateStarts,
            @RequestParam(required = false) String ratePeriod,
            Model model,
            HttpServletResponse response,
            RedirectAttributes flash) {
        String q = queue == null ? "" : queue;
        Rate rate;
        try {
            check("queue", q);
            Integer starts = number("rateStarts", rateStarts);
            Duration period = duration(ratePeriod);
            if (starts == null || period == null) {
                throw new IllegalArgumentException(
                        "a queue-wide rate needs both rateStarts (at least 1) and ratePeriod (such as 1s)");
            }
            rate = new Rate(starts, period);
            dbTasks.limits().setQueueRate(q, rate);
        } catch (IllegalArgumentException e) {
            response.setStatus(HttpStatus.BAD_REQUEST.value());
            model.addAttribute("queueRateForm", new QueueRateForm(queue, rateStarts, ratePeriod));
            return page(model, null, e.getMessage());
        }
        flash.addFlashAttribute(
                "message",
                "Set the rate of queue " + q + ": " + rate + ", whatever the tasks' keys (in force on every engine"
                        + " within " + Limits.REFRESH_MILLIS + " ms)");
        return "redirect:/dashboard/limits";
    }

    /**
     * @param queue the queue
     * @param model the page's model, when the queue has no queue-wide rate
     * @param response to set 404 on, when the queue has no queue-wide rate
     * @param flash the message for the page redirected to
     * @return a redirect to the page, or the page with the error (404)
     */
    @PostMapping("/dashboard/limits/queue-rate/delete")
    public String removeQueueRate(
            @RequestParam(required = false) String queue,
            Model model,
            HttpServletResponse response,
            RedirectAttributes flash) {
        String q = required("queue", queue);
        if (!dbTasks.limits().removeQueueRate(q)) {
            response.setStatus(HttpStatus.NOT_FOUND.value());
            return page(model, null, "Queue " + q + " has no queue-wide rate");
        }
        flash.addFlashAttribute(
                "message",
                "Removed the rate of queue " + q + " (lifted on every engine within " + Limits.REFRESH_MILLIS
                        + " ms; its limits per key stay)");
        return "redirect:/dashboard/limits";
    }

    /**
     * @param queue the queue
     * @param fair {@code true} to make its claims fair across keys, {@code false} for plain again
     * @param model the page's model, when the input is refused
     * @param response to set 400 on, when the input is refused
     * @param flash the message for the page redirected to
     * @return a redirect to the page, or the page with the error (400)
     */
    @PostMapping("/dashboard/limits/fair")
    public String setFair(
            @RequestParam(required = false) String queue,
            @RequestParam(required = false) String fair,
            Model model,
            HttpServletResponse response,
            RedirectAttributes flash) {
        String q = queue == null ? "" : queue;
        try {
            check("queue", q);
            if (fair == null || !(fair.equals("true") || fair.equals("false"))) {
                throw new IllegalArgumentException("fair must be true or false");
            }
            dbTasks.limits().setFair(q, Boolean.parseBoolean(fair));
        } catch (IllegalArgumentException e) {
            response.setStatus(HttpStatus.BAD_REQUEST.value());
            return page(model, null, e.getMessage());
        }
        flash.addFlashAttribute(
                "message",
                (Boolean.parseBoolean(fair)
                                ? "Queue " + q + " claims fairly across keys"
                                : "Queue " + q + " is plain again")
                        + " (on every engine within " + Limits.REFRESH_MILLIS + " ms)");
        return "redirect:/dashboard/limits";
    }

    /**
     * @param e what the core or the form's checks refused
     * @param model the page's model
     * @return the page with the message (400)
     */
    @ExceptionHandler(IllegalArgumentException.class)
    @ResponseStatus(HttpStatus.BAD_REQUEST)
    public String badRequest(IllegalArgumentException e, Model model) {
        dashboard.caller(model);
        return page(model, null, e.getMessage());
    }

    // --- the page ------------------------------------------------------------------------------------

    /**
     * What the set form holds: blank on a fresh page, the refused values after an error.
     *
     * @param queue the queue
     * @param keyPattern the key pattern
     * @param maxRunning the maximum running, as typed
     * @param fifo whether FIFO was ticked
     * @param rateStarts the rate's starts, as typed
     * @param ratePeriod the rate's period, as typed
     */
    public record LimitForm(
            @Nullable String queue,
            @Nullable String keyPattern,
            @Nullable String maxRunning,
            boolean fifo,
            @Nullable String rateStarts,
            @Nullable String ratePeriod) {
        static final LimitForm EMPTY = new LimitForm(null, Limit.EVERY_KEY, null, false, null, null);
    }

    /**
     * What the queue-wide rate form holds: blank on a fresh page, the refused values after an error.
     *
     * @param queue the queue
     * @param rateStarts the rate's starts, as typed
     * @param ratePeriod the rate's period, as typed
     */
    public record QueueRateForm(
            @Nullable String queue,
            @Nullable String rateStarts,
            @Nullable String ratePeriod) {
        static final QueueRateForm EMPTY = new QueueRateForm(null, null, null);
    }

    /**
     * One key of the shown queue.
     *
     * @param load its counts and limit
     * @param limit the limit as one line, or {@code null} if none applies
     * @param atLimit whether it runs as many tasks as its limit allows
     */
    public record KeyRow(KeyLoad load, @Nullable String limit, boolean atLimit) {}

    private String page(Model model, @Nullable String queue, @Nullable String error) {
        List<Limit> limits = dbTasks.limits().list();
        List<String> fair = dbTasks.limits().fairQueues();
        Map<String, Rate> queueRates = dbTasks.limits().queueRates();
        TreeSet<String> queues = new TreeSet<>(snapshots.queues());
        limits.forEach(l -> queues.add(l.queue()));
        queues.addAll(fair);
        queues.addAll(queueRates.keySet());
        model.addAttribute("page", "limits");
        model.addAttribute("limits", limits);
        model.addAttribute("fairQueues", fair);
        model.addAttribute("queueRates", queueRates);
        model.addAttribute("queueNames", queues);
        model.addAttribute("queue", queue);
        model.addAttribute("refreshMillis", Limits.REFRESH_MILLIS);
        model.addAttribute("keyRows", KEY_ROWS);
        model.addAttribute("error", error);
        if (!model.containsAttribute("form")) {
            model.addAttribute("form", LimitForm.EMPTY);
        }
        if (!model.containsAttribute("queueRateForm")) {
            model.addAttribute("queueRateForm", QueueRateForm.EMPTY);
        }
        if (queue != null) {
            // Limits.load counts every key of the queue in one grouped read; the page lists the busiest.
            List<KeyLoad> load = dbTasks.limits().load(queue);
            model.addAttribute("keyCount", load.size());
            model.addAttribute(
                    "keys",
                    load.stream()
                            .sorted(Comparator.comparingLong((KeyLoad k) -> k.running() + k.waiting())
                                    .reversed()
                                    .thenComparing(KeyLoad::key))
                            .limit(KEY_ROWS)
                            .map(k -> new KeyRow(
                                    k,
                                    k.limit() == null ? null : describe(k.limit()),
                                    k.limit() != null
                                            && k.limit().limitsRunning()
                                            && k.running() >= k.limit().maxRunning()))
                            .toList());
        }
        return "dashboard/limits";
    }

    /**
     * @param limit a limit
     * @return what it allows as one line, such as {@code at most 3 running, 10 starts per 1s}
     */
    static String describe(Limit limit) {
        StringBuilder s = new StringBuilder();
        if (limit.fifo()) {
            s.append("FIFO, one at a time");
        } else if (limit.limitsRunning()) {
            s.append("at most ").append(limit.maxRunning()).append(" running");
        }
        if (limit.rate() != null) {
            s.append(s.isEmpty() ? "" : ", ").append(limit.rate());
        }
        return s.toString();
    }

    // --- the form's values -----------------------------------------------------------------------------

    private static Limit limit(
            @Nullable String queue,
            @Nullable String keyPattern,
            @Nullable String maxRunning,
            @Nullable String fifo,
            @Nullable String rateStarts,
            @Nullable String ratePeriod) {
        String q = queue == null ? "" : queue;
        String pattern = keyPattern == null ? "" : keyPattern;
        check("queue", q);
        check("keyPattern", pattern);
        boolean isFifo = isTrue(fifo);
        Integer max = number("maxRunning", maxRunning);
        Integer starts = number("rateStarts", rateStarts);
        Duration period = duration(ratePeriod);
        boolean rated = starts != null || period != null;
        if (!isFifo && max == null && !rated) {
            throw new IllegalArgumentException(
                    "give maxRunning (at least 1), FIFO, or a rate (rateStarts per ratePeriod)");
        }
        if (rated && (starts == null || period == null)) {
            throw new IllegalArgumentException("a rate needs both rateStarts (at least 1) and ratePeriod (such as 1s)");
        }
        Rate rate = rated ? new Rate(starts, period) : null;
        int running = max != null ? max : isFifo ? 1 : Limit.NO_MAX_RUNNING;
        return new Limit(q, pattern, running, isFifo, rate);
    }

    private static boolean isTrue(@Nullable String value) {
        return value != null && (value.equals("true") || value.equals("on"));
    }

    private static @Nullable Integer number(String field, @Nullable String value) {
        if (value == null || value.isBlank()) {
            return null;
        }
        String v = value.strip();
        if (!v.matches("-?[0-9]{1,9}")) {
            throw new IllegalArgumentException(field + " must be a whole number, got '" + StoredText.forLog(v) + "'");
        }
        return Integer.parseInt(v);
    }

    private static @Nullable Duration duration(@Nullable String value) {
        if (value == null || value.isBlank()) {
            return null;
        }
        String v = value.strip().toLowerCase(Locale.ROOT);
        try {
            return DurationStyle.detectAndParse(v.startsWith("p") ? v.toUpperCase(Locale.ROOT) : v);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("ratePeriod must be a duration such as 500ms, 1s, 1m or PT1S, got '"
                    + StoredText.forLog(value.strip()) + "'");
        }
    }

    private static String required(String field, @Nullable String value) {
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException(field + " is required");
        }
        check(field, value);
        return value;
    }

    private static void check(String field, String value) {
        String problem = StoredText.problem(value);
        if (problem != null) {
            throw new IllegalArgumentException(field + " " + problem);
        }
    }
}
