/**
 * Run-once guards: work that must succeed at most once per key across every instance, such as a
 * scheduled report ({@link io.dbtasks.once.RunOnceGuards}, from {@code DbTasks.guards()}), with
 * period keys for days, hours and cron slots ({@link io.dbtasks.once.PeriodKeys}).
 */
@NullMarked
package io.dbtasks.once;

import org.jspecify.annotations.NullMarked;
