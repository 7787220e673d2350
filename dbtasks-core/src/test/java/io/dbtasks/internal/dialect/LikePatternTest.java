package io.dbtasks.internal.dialect;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class LikePatternTest {
    @Test
    void aKeyPatternBecomesTheLikePatternThatMatchesTheSameKeys() {
        assertThat(Dialect.likePattern("*")).isEqualTo("%");
        assertThat(Dialect.likePattern("tenant-*")).isEqualTo("tenant-%");
        assertThat(Dialect.likePattern("*-eu-*")).isEqualTo("%-eu-%");
        assertThat(Dialect.likePattern("exact")).isEqualTo("exact");
        assertThat(Dialect.likePattern("a_b%c")).isEqualTo("a\\_b\\%c");
        assertThat(Dialect.likePattern("x\\y*")).isEqualTo("x\\\\y%");
    }
}
