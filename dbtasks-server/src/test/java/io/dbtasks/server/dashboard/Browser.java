package io.dbtasks.server.dashboard;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Assumptions;
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

    static void requireBrowser() {
        boolean present = Files.isExecutable(CHROMEDRIVER) && Files.isExecutable(CHROMIUM);
        if (Boolean.getBoolean("dbtasks.test.browser.required") && !present) {
            throw new IllegalStateException("dbtasks.test.browser.required is set but " + CHROMEDRIVER + " or "
                    + CHROMIUM + " is missing: apt-get install -y chromium chromium-driver");
        }
        Assumptions.assumeTrue(present, "no " + CHROMEDRIVER + " / " + CHROMIUM + ": browser tests skipped");
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
