package io.dbtasks.internal.claim;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ClaimAheadTest {
    private static final long SHORT = TimeUnit.MICROSECONDS.toNanos(100);

    /** 8 slots, claim batch 100, handlers of 0.1 ms: the horizon allows 800, the batch bounds it. */
    private static ClaimAhead shortTasks() {
        ClaimAhead ahead = new ClaimAhead(8, 100, true);
        ahead.handlerRan(SHORT);
        return ahead;
    }

    @Test
    void nothingIsClaimedAheadBeforeAHandlerIsSeenOrWhenTurnedOff() {
        assertThat(new ClaimAhead(8, 100, true).size()).isZero();
        ClaimAhead off = new ClaimAhead(8, 100, false);
        off.handlerRan(SHORT);
        assertThat(off.size()).isZero();
    }

    @Test
    void theBufferFollowsTheAverageHandlerTime() {
        assertThat(shortTasks().size()).isEqualTo(100);
        ClaimAhead few = new ClaimAhead(2, 10, true);
        few.handlerRan(SHORT);
        assertThat(few.size()).as("a whole claim batch is more than 4 per slot").isEqualTo(10);
        ClaimAhead ahead = new ClaimAhead(8, 100, true);
        ahead.handlerRan(TimeUnit.MILLISECONDS.toNanos(1));
        ahead.handlerRan(TimeUnit.MILLISECONDS.toNanos(2)); // average 1.1 ms: 8 x 10 ms / 1.1 ms
        assertThat(ahead.size()).isEqualTo(72);
        ahead.handlerRan(TimeUnit.MILLISECONDS.toNanos(800)); // average about 81 ms, beyond 8 x 10 ms
        assertThat(ahead.size()).isZero();
    }

    @Test
    void aTaskThatWaitedTooLongEmptiesTheBufferUntilHandlersSpeedUp() {
        ClaimAhead ahead = shortTasks();
        ahead.waitedTooLong(TimeUnit.SECONDS.toNanos(1));
        assertThat(ahead.size()).isZero();
        for (int i = 0; i < 40; i++) {
            ahead.handlerRan(SHORT);
        }
        assertThat(ahead.size()).isPositive();
    }

    @Test
    void eachClaimHeldBackByALimitHalvesTheBufferToNothing() {
        ClaimAhead ahead = shortTasks();
        List<Integer> sizes = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            ahead.afterClaim(true);
            sizes.add(ahead.size());
        }
        assertThat(sizes).containsExactly(50, 25, 12, 6, 3, 1, 0, 0);
    }

    @Test
    void cleanClaimsRaiseItByAQuarterOfTheSlotsUntilTheHandlerTimesBindAgain() {
        ClaimAhead ahead = shortTasks();
        for (int i = 0; i < 7; i++) {
            ahead.afterClaim(true);
        }
        ahead.afterClaim(false);
        assertThat(ahead.size()).isEqualTo(2);
        for (int i = 0; i < 48; i++) {
            ahead.afterClaim(false);
        }
        assertThat(ahead.size()).isEqualTo(98);
        ahead.afterClaim(false);
        assertThat(ahead.size()).isEqualTo(100);
        ahead.handlerRan(0);
        ahead.handlerRan(0); // faster handlers: the buffer is bound only by the batch, as before
        assertThat(ahead.size()).isEqualTo(100);

        ahead.afterClaim(true);
        assertThat(ahead.size()).isEqualTo(50);
        ahead.afterClaim(false);
        assertThat(ahead.size())
                .as("growth resumes from where it was halved to")
                .isEqualTo(52);
        ahead.afterClaim(true);
        assertThat(ahead.size()).isEqualTo(26);
    }

    @Test
    void aLoopWithFewSlotsGrowsByOneAClaim() {
        ClaimAhead ahead = new ClaimAhead(2, 10, true);
        ahead.handlerRan(SHORT);
        ahead.afterClaim(true);
        ahead.afterClaim(true);
        assertThat(ahead.size()).isEqualTo(2);
        ahead.afterClaim(false);
        assertThat(ahead.size()).isEqualTo(3);
    }

    @Test
    void theBoundFromLimitsNeverRaisesTheBufferAboveWhatHandlerTimesAllow() {
        ClaimAhead ahead = shortTasks();
        ahead.afterClaim(true); // 50
        ahead.handlerRan(TimeUnit.SECONDS.toNanos(10)); // slow now: the horizon allows none
        assertThat(ahead.size()).isZero();
        ahead.afterClaim(false);
        assertThat(ahead.size()).isZero();
    }
}
