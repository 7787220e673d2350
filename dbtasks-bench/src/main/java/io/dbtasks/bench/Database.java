package io.dbtasks.bench;

import java.util.Locale;

/**
 * The databases the harness measures and the few SQL fragments in which they differ: the database
 * clock, a row generator for bulk inserts, and a bounded DELETE for retention.
 */
enum Database {
    POSTGRESQL("clock_timestamp()") {
        @Override
        String rows(long n) {
            return "generate_series(1::bigint, " + n + ") AS g(n)";
        }

        @Override
        String secondsAgo(String seconds) {
            return "(clock_timestamp() - (" + seconds + ") * INTERVAL '1 second')";
        }

        @Override
        String range(long from, long to) {
            return "generate_series(" + from + "::bigint, " + to + ") AS g(n)";
        }

        @Override
        String millisAgo(String millis) {
            return "(clock_timestamp() - (" + millis + ") * INTERVAL '1 millisecond')";
        }

        @Override
        String deleteFinishedBefore(String cutoff, int limit) {
            return "DELETE FROM dbtasks_task WHERE id IN (SELECT id FROM dbtasks_task WHERE status = 'SUCCEEDED'"
                    + " AND finished_at < " + cutoff + " LIMIT " + limit + ")";
        }
    },
    MARIADB("UTC_TIMESTAMP(6)") {
        @Override
        String rows(long n) {
            // The SEQUENCE engine's virtual table, on by default in MariaDB.
            return "(SELECT seq AS n FROM seq_1_to_" + n + ") AS g";
        }

        @Override
        String secondsAgo(String seconds) {
            return "TIMESTAMPADD(SECOND, -(" + seconds + "), UTC_TIMESTAMP(6))";
        }

        @Override
        String range(long from, long to) {
            return "(SELECT seq AS n FROM seq_" + from + "_to_" + to + ") AS g";
        }

        @Override
        String millisAgo(String millis) {
            return "TIMESTAMPADD(MICROSECOND, -(" + millis + ") * 1000, UTC_TIMESTAMP(6))";
        }

        @Override
        String deleteFinishedBefore(String cutoff, int limit) {
            return "DELETE FROM dbtasks_task WHERE status = 'SUCCEEDED' AND finished_at < " + cutoff + " LIMIT "
                    + limit;
        }
    },
    H2("CURRENT_TIMESTAMP(6)") {
        @Override
        String rows(long n) {
            return "(SELECT X AS n FROM SYSTEM_RANGE(1, " + n + ")) AS g";
        }

        @Override
        String secondsAgo(String seconds) {
            return "DATEADD(SECOND, -(" + seconds + "), CURRENT_TIMESTAMP(6))";
        }

        @Override
        String range(long from, long to) {
            return "(SELECT X AS n FROM SYSTEM_RANGE(" + from + ", " + to + ")) AS g";
        }

        @Override
        String millisAgo(String millis) {
            return "DATEADD(MILLISECOND, -(" + millis + "), CURRENT_TIMESTAMP(6))";
        }

        @Override
        String deleteFinishedBefore(String cutoff, int limit) {
            return "DELETE FROM dbtasks_task WHERE status = 'SUCCEEDED' AND finished_at < " + cutoff + " FETCH FIRST "
                    + limit + " ROWS ONLY";
        }
    };

    private final String now;

    Database(String now) {
        this.now = now;
    }

    /** @return the database named by a JDBC URL */
    static Database of(String jdbcUrl) {
        String url = jdbcUrl.toLowerCase(Locale.ROOT);
        if (url.startsWith("jdbc:postgresql:")) {
            return POSTGRESQL;
        }
        if (url.startsWith("jdbc:mariadb:") || url.startsWith("jdbc:mysql:")) {
            return MARIADB;
        }
        if (url.startsWith("jdbc:h2:")) {
            return H2;
        }
        throw new IllegalArgumentException(
                "Unsupported JDBC URL " + jdbcUrl + ": use jdbc:postgresql:, jdbc:mariadb: or jdbc:h2:");
    }

    /** @return the lower-case name used in file names and the report */
    String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** @return an SQL expression for the database's current time */
    String now() {
        return now;
    }

    /** @return a FROM item yielding {@code n} rows with one column {@code n}, 1 to {@code n} */
    abstract String rows(long n);

    /** @return an SQL expression for now minus {@code seconds} (an SQL expression) seconds */
    abstract String secondsAgo(String seconds);

    /** @return a FROM item yielding the rows {@code from} to {@code to} (inclusive) in one column {@code n} */
    abstract String range(long from, long to);

    /** @return an SQL expression for now minus {@code millis} (an integer SQL expression) milliseconds */
    abstract String millisAgo(String millis);

    /** @return a DELETE of at most {@code limit} SUCCEEDED rows finished before {@code cutoff} */
    abstract String deleteFinishedBefore(String cutoff, int limit);

    /**
     * @return an SQL expression of the history day of {@code timestamp}: whole days since
     *     1970-01-01 UTC, the engine's partition key of finished tasks
     */
    String historyDay(String timestamp) {
        return switch (this) {
            case POSTGRESQL -> "(floor(extract(epoch FROM " + timestamp + ") / 86400))::INTEGER";
            case MARIADB -> "(TO_DAYS(" + timestamp + ") - 719528)";
            case H2 -> "CAST(FLOOR(EXTRACT(EPOCH FROM " + timestamp + ") / 86400) AS INTEGER)";
        };
    }
}
