package io.dbtasks.server.dashboard;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * Headless Chromium through the system's chromedriver (no browser download). The tests that use
 * it are skipped when {@code /usr/bin/chromedriver} is missing, unless {@code
 * -Ddbtasks.test.browser.required=true} (CI), which makes its absence a failure.
 */
final class Browser {
    static final Path CHROMEDRIVER = Path.of(System.getProperty("dbtasks.test.chromedriver", "/usr/bin/chromedriver"));
    static final Path CHROMIUM = Path.of(System.getProperty("dbtasks.test.chromium", "/usr/bin/chromium"));

    private Browser() {}

    private static boolean present() {
        boolean present = Files.isExecutable(CHROMEDRIVER) && Files.isExecutable(CHROMIUM);
        if (Boolean.getBoolean("dbtasks.test.browser.required") && !present) {
            throw new IllegalStateException("dbtasks.test.browser.required is set but " + CHROMEDRIVER + " or "
                    + CHROMIUM + " is missing: apt-get install -y chromium chromium-driver");
        }
        return present;
    }

    private static String missing() {
        return "no " + CHROMEDRIVER + " / " + CHROMIUM
                + ": browser tests skipped (apt-get install -y chromium chromium-driver, or"
                + " -Ddbtasks.test.chromedriver=... -Ddbtasks.test.chromium=...)";
    }

    /**
     * Disables each test of a class that needs the browser, with the reason, when it is missing;
     * decided per test and before the test instance (and its Spring context) is made, so each test
     * is reported skipped with the reason instead of the class vanishing from the counts. With
     * {@code -Ddbtasks.test.browser.required=true} a missing browser fails each test instead.
     */
    static final class Required implements ExecutionCondition {
        @Override
        public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
            if (context.getTestMethod().isEmpty()) {
                return ConditionEvaluationResult.enabled("decided per test");
            }
            if (present()) {
                return ConditionEvaluationResult.enabled("chromium and chromedriver are installed");
            }
            System.out.println("SKIPPED " + context.getDisplayName() + ": " + missing());
            return ConditionEvaluationResult.disabled(missing());
        }
    }

    static WebDriver start(int width, int height) {
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toFile());
        options.addArguments(
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-dev-shm-usage",
                "--window-size=" + width + "," + height);
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(CHROMEDRIVER.toFile())
                .usingAnyFreePort()
                .build();
        ChromeDriver driver = new ChromeDriver(service, options);
        driver.manage().window().setSize(new Dimension(width, height));
        driver.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(60));
        return driver;
    }

    /** Where screenshots go: {@code dbtasks.screenshots.dir}, else {@code target/screenshots}. */
    static Path screenshotDir() {
        return Path.of(System.getProperty("dbtasks.screenshots.dir", "target/screenshots"));
    }

    static void screenshot(WebDriver driver, String name) {
        try {
            Path dir = screenshotDir();
            Files.createDirectories(dir);
            byte[] png = ((TakesScreenshot) driver).getScreenshotAs(OutputType.BYTES);
            Files.write(dir.resolve(name + ".png"), png);
        } catch (IOException e) {
            throw new IllegalStateException("cannot write screenshot " + name, e);
        }
    }
}
