"""A real browser on the served Prefect UI: Debian's headless Chromium driven by selenium, and the few page
parts the browser test touches (the run form's fields, its Submit button, a run page's tabs)."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

CHROMIUM = "chromium"
CHROMEDRIVER = "chromedriver"
MISSING_BROWSER = (
    "Debian's chromium and chromium-driver are not installed (`make test` installs them where apt-get works)"
)


def browser_available() -> bool:
    """Whether Debian's chromium and its driver are on PATH."""
    return bool(shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER))


def start_browser() -> Any:
    """Headless Chromium through chromedriver (no network beyond 127.0.0.1 is needed)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1800"):
        options.add_argument(argument)
    options.binary_location = shutil.which(CHROMIUM)
    return webdriver.Chrome(service=Service(shutil.which(CHROMEDRIVER)), options=options)


def wait_for(condition: Callable[[], Any], timeout: float, what: str, every: float = 0.5) -> Any:
    """`condition()`'s first truthy value, retried (page parts render asynchronously) until `timeout`."""
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        try:
            found = condition()
        except Exception as error:  # an element not rendered yet, or replaced while read
            found, last_error = None, error
        if found:
            return found
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what} (last error: {last_error})")


def page_text(driver: Any) -> str:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.TAG_NAME, "body").text


def click_text(
    driver: Any, tag: str, text: str, timeout: float = 30, within: Any = None, last: bool = False
) -> None:
    """Click the first visible `tag` element (`*`: any) whose text is `text` and which holds no other such
    element (inside `within`, if given; the last one if `last`: the newest of stacked toasts), or the button
    or link around it; retried while the page still moves (a toast sliding in takes the click meanwhile)."""
    from selenium.webdriver.common.by import By

    innermost = f".//{tag}[normalize-space(.)='{text}' and not(.//*[normalize-space(.)='{text}'])]"

    def click() -> bool:
        found = (within or driver).find_elements(By.XPATH, innermost)
        element = [candidate for candidate in found if candidate.is_displayed()][-1 if last else 0]
        clickable = element.find_elements(By.XPATH, "./ancestor-or-self::*[self::button or self::a][1]")
        target = clickable[0] if clickable else element  # the button itself, not the label inside it
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", target)
        target.click()
        return True

    wait_for(click, timeout, f"<{tag}> '{text}' to take a click")


def form_field(driver: Any, label: str, within: Any = None) -> Any:
    """The run form's field titled `label` (its "(Optional)" suffix ignored), searched in `within`."""
    from selenium.webdriver.common.by import By

    scope = within or driver
    for field in scope.find_elements(By.CSS_SELECTOR, ".schema-form-property"):
        titles = field.find_elements(
            By.CSS_SELECTOR, ":scope > .p-label__header .schema-form-property__label"
        )
        if titles and titles[0].text.split(" (")[0] == label:
            return field
    raise LookupError(f"no form field titled {label!r}")


def type_into(driver: Any, element: Any, text: str) -> None:
    """Replace an input's value the way a user does: select all, type."""
    from selenium.webdriver.common.keys import Keys

    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
    element.send_keys(Keys.CONTROL, "a")
    element.send_keys(text)


def screenshot(driver: Any, path: Path) -> Path:
    """The whole page as a PNG at `path` (kept with the test's files for a reader)."""
    driver.save_screenshot(str(path))
    return path
