package io.dbtasks.schedule;

/**
 * The dialect a cron expression is written in. Both have six fields with seconds first ({@code
 * second minute hour day-of-month month day-of-week}); they differ in the day of the week and in
 * {@code ?}.
 *
 * <table>
 *   <caption>Differences between the two dialects</caption>
 *   <tr><th></th><th>{@link #SPRING}</th><th>{@link #QUARTZ}</th></tr>
 *   <tr><td>day-of-week numbers</td><td>0 or 7 = Sunday, 1 = Monday ... 6 = Saturday</td>
 *       <td>1 = Sunday, 2 = Monday ... 7 = Saturday</td></tr>
 *   <tr><td>{@code ?}</td><td>optional, the same as {@code *}</td>
 *       <td>required in exactly one of day-of-month and day-of-week</td></tr>
 *   <tr><td>a seventh field (year)</td><td>no</td><td>optional</td></tr>
 *   <tr><td>{@code L}, {@code W}, {@code #}</td><td>yes (Spring 5.3+)</td><td>yes</td></tr>
 *   <tr><td>macros ({@code @daily}, {@code @hourly} ...)</td><td>yes</td><td>no</td></tr>
 * </table>
 *
 * <p>Names ({@code MON}, {@code JAN}) mean the same in both. So {@code "0 0 12 * * 1"} is Monday noon
 * in Spring syntax and is refused in Quartz syntax, where Monday noon is {@code "0 0 12 ? * 2"} or
 * {@code "0 0 12 ? * MON"}.
 *
 * <p>Parsing and matching are done by cron-utils ({@code com.cronutils}, definitions {@code SPRING53}
 * and {@code QUARTZ}); see {@link Trigger#cron(String, CronSyntax, java.time.ZoneId)} for why.
 */
public enum CronSyntax {
    /** Spring's {@code CronExpression} (Spring Framework 5.3+), as in {@code @Scheduled(cron = ...)}. */
    SPRING,
    /** Quartz's {@code CronTrigger}. */
    QUARTZ
}
