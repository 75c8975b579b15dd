//! Helpers shared by the integration tests.

/// expand(1): tabs to spaces at 8-column stops (the seeds' text was expanded).
pub fn expand(text: &str) -> String {
    let mut out = String::new();
    for line in text.split_inclusive('\n') {
        let mut column = 0;
        for c in line.chars() {
            if c == '\t' {
                let spaces = 8 - column % 8;
                out.extend(std::iter::repeat_n(' ', spaces));
                column += spaces;
            } else {
                out.push(c);
                column = if c == '\n' { 0 } else { column + 1 };
            }
        }
    }
    out
}
