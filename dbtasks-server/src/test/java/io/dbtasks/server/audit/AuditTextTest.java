package io.dbtasks.server.audit;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** What the audit log does to text before storing it. */
class AuditTextTest {
    @Test
    void controlCharactersAndUnpairedSurrogatesAreReplaced() {
        assertThat(AuditLog.text("a\u0000b\r\nc\u0001", 100)).isEqualTo("a?b??c?");
        assertThat(AuditLog.text("x\uD800y\uDC00z", 100)).isEqualTo("x\uFFFDy\uFFFDz");
        assertThat(AuditLog.text("ok \uD83D\uDE00", 100)).isEqualTo("ok \uD83D\uDE00");
        assertThat(AuditLog.text(null, 100)).isNull();
    }

    @Test
    void longTextIsCutToTheLimitWithAnEllipsisAndNeverInsideASurrogatePair() {
        assertThat(AuditLog.text("abcdef", 6)).isEqualTo("abcdef");
        assertThat(AuditLog.text("abcdefg", 6)).isEqualTo("abcde\u2026");
        String cut = AuditLog.text("abcd\uD83D\uDE00\uD83D\uDE00", 6);
        assertThat(cut).isEqualTo("abcd\u2026");
        assertThat(cut.length()).isLessThanOrEqualTo(6);
        for (int max = 2; max < 40; max++) {
            String s = AuditLog.text("\uD83D\uDE00".repeat(30), max);
            assertThat(s.length()).isLessThanOrEqualTo(max);
            assertThat(Character.isHighSurrogate(s.charAt(s.length() - 1))).isFalse();
        }
    }
}
