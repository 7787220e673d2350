package io.dbtasks.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class SpreadTest {
    @Test
    void theMedianOfAnOddCountIsTheMiddleAndOfAnEvenCountTheMeanOfTheMiddleTwo() {
        assertThat(Spread.median(List.of(3.0, 1.0, 2.0))).isEqualTo(2.0);
        assertThat(Spread.median(List.of(4.0, 1.0, 3.0, 2.0))).isEqualTo(2.5);
        assertThatThrownBy(() -> Spread.median(List.of())).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aSummaryGivesTheMedianTheRangeAndTheCount() {
        assertThat(Spread.summary(List.of(0.5, 0.75, 0.25), "%.2f"))
                .isEqualTo("median 0.50 (min 0.25, max 0.75, 3 runs)");
        assertThat(Spread.summary(List.of(7.0, 9.0), "%.0f", "samples"))
                .isEqualTo("median 8 (min 7, max 9, 2 samples)");
    }
}
