package io.dbtasks.server.audit;

/** How a recorded request ended, by its HTTP status. */
public enum AuditOutcome {
    /** 1xx to 3xx: the action was done (a dashboard action answers with a redirect). */
    SUCCESS,
    /** 4xx: the server refused it (role, CSRF, bad input, nothing to act on, wrong state). */
    REFUSED,
    /** 5xx: the server failed while doing it. */
    FAILED;

    /**
     * @param status the HTTP status of the response
     * @return the outcome it means
     */
    public static AuditOutcome of(int status) {
        if (status >= 500) {
            return FAILED;
        }
        return status >= 400 ? REFUSED : SUCCESS;
    }
}
