/**
 * The engine's wiring: {@link io.dbtasks.internal.Engine} builds its parts from the role packages
 * ({@code claim}, {@code execution}, {@code lease}, {@code completion}, {@code enqueue}, {@code query},
 * {@code maintenance}, on top of {@code support}) and starts and stops them. Not an API: anything here
 * may change in any release. Use {@link io.dbtasks.DbTasks}.
 */
package io.dbtasks.internal;
