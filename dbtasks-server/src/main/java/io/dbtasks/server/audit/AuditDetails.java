package io.dbtasks.server.audit;

import java.util.concurrent.CompletionStage;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;

/**
 * What a controller adds to the audit entry of the request it is serving, where it knows more than
 * the request shows: the filter of a bulk action and how many tasks it touched. {@link AuditFilter}
 * records every state-changing request on its own; a controller calls these only for what it alone
 * knows. Outside an audited request (a GET, a test calling a controller directly) the calls do
 * nothing.
 *
 * <p>Each request has its own details, held as a request attribute; the static methods act on the
 * current thread's request. Not for use from other threads.
 */
public final class AuditDetails {
    static final String ATTRIBUTE = AuditDetails.class.getName();

    private String filter;
    private Long touched;
    private CompletionStage<? extends Number> touchedLater;

    AuditDetails() {}

    /**
     * States the filter a bulk action selects its tasks with.
     *
     * @param filter the filter in a readable form, such as {@code state=FAILED&queue=mail}; stored
     *     cut to a bounded length; {@code null} clears it
     */
    public static void filter(String filter) {
        AuditDetails d = current();
        if (d != null) {
            d.filter = filter;
        }
    }

    /**
     * States how many tasks (runs, chunks) the action changed.
     *
     * @param count the number, 0 or more
     */
    public static void touched(long count) {
        AuditDetails d = current();
        if (d != null) {
            d.touched = count;
            d.touchedLater = null;
        }
    }

    /**
     * States that the action goes on in the background and how many tasks it changed will be known
     * when {@code count} completes. The entry is stored when the request ends, without the number;
     * the number is added to it once, when it is known (a failed stage leaves it empty).
     *
     * @param count completes with the number of tasks changed
     */
    public static void touchedWhenDone(CompletionStage<? extends Number> count) {
        AuditDetails d = current();
        if (d != null) {
            d.touched = null;
            d.touchedLater = count;
        }
    }

    String filter() {
        return filter;
    }

    Long touched() {
        return touched;
    }

    CompletionStage<? extends Number> touchedLater() {
        return touchedLater;
    }

    private static AuditDetails current() {
        RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
        if (attributes == null) {
            return null;
        }
        return attributes.getAttribute(ATTRIBUTE, RequestAttributes.SCOPE_REQUEST) instanceof AuditDetails d ? d : null;
    }
}
