package io.dbtasks.spring.autoconfigure;

import io.dbtasks.spring.DbTasksDataSource;
import javax.sql.DataSource;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;

/**
 * Matches when the engine has a DataSource to use: a bean marked {@link DbTasksDataSource}, or a
 * single (or primary) DataSource.
 */
final class DbTasksDataSourceAvailable extends AnyNestedCondition {
    DbTasksDataSourceAvailable() {
        super(ConfigurationPhase.REGISTER_BEAN);
    }

    @ConditionalOnBean(annotation = DbTasksDataSource.class)
    static final class Marked {}

    @ConditionalOnSingleCandidate(DataSource.class)
    static final class SingleOrPrimary {}
}
