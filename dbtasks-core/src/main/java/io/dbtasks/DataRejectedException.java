package io.dbtasks;

/**
 * The database refused a value it was given: a data exception (SQLState class 22, such as a value
 * too long for its column, a number out of range, text the database's encoding cannot hold) or an
 * integrity constraint violation (class 23) that no more specific exception reports. The database
 * answered, so this says nothing about its health and does not count against {@link
 * DbTasks#health()}; the values passed in are what to fix.
 */
public class DataRejectedException extends DbTasksException {
    private final String sqlState;

    /**
     * @param message what was being done and what the database said
     * @param sqlState the SQLState the database reported, in class 22 or 23
     * @param cause the database's error
     */
    public DataRejectedException(String message, String sqlState, Throwable cause) {
        super(message, cause);
        this.sqlState = sqlState;
    }

    /** @return the SQLState the database reported, in class 22 (data) or 23 (constraint) */
    public String sqlState() {
        return sqlState;
    }
}
