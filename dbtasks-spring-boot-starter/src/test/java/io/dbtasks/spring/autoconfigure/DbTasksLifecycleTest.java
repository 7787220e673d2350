package io.dbtasks.spring.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dbtasks.DbTasks;
import io.dbtasks.spring.DuplicateKindException;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.boot.diagnostics.FailureAnalysis;

class DbTasksLifecycleTest {

    @Test
    void startsAndStopsTheEngineAndRefusesARestart() {
        JdbcDataSource dataSource = new JdbcDataSource();
        dataSource.setURL("jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        DbTasks dbTasks = DbTasks.builder(dataSource).build();
        DbTasksLifecycle lifecycle = new DbTasksLifecycle(dbTasks, Duration.ofSeconds(1));
        assertThat(lifecycle.isRunning()).isFalse();

        lifecycle.start();
        assertThat(lifecycle.isRunning()).isTrue();
        assertThat(dbTasks.isRunning()).isTrue();

        lifecycle.stop();
        assertThat(lifecycle.isRunning()).isFalse();
        assertThat(dbTasks.isRunning()).isFalse();
        lifecycle.stop(); // idempotent

        assertThatThrownBy(lifecycle::start)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("cannot be restarted");
    }

    @Test
    void duplicateKindFailureIsReportedWithTheClashingBeans() {
        DuplicateKindException cause =
                new DuplicateKindException("order.sync", List.of("a (com.example.A)", "b (com.example.B)"));
        FailureAnalysis analysis =
                new DuplicateKindFailureAnalyzer().analyze(new BeanCreationException("dbTasks", "failed", cause));
        assertThat(analysis).isNotNull();
        assertThat(analysis.getDescription())
                .contains("'order.sync'")
                .contains("a (com.example.A)")
                .contains("b (com.example.B)");
        assertThat(analysis.getAction()).contains("kind()");
    }
}
