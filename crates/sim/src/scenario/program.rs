//! Process programs in the paper's Figure 1 syntax.
//!
//! A program is what one simulated process does: blocks of requests, each repeated `loop K`
//! times, each request a resource (or `idle`), a mean, a width and a distribution. The syntax is
//! line based, so every error carries the line it was found on; the scenario loader moves that
//! line into the scenario file when the program sits inside one.

use super::limits::{request_value, REQUEST_EXPECTED};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// A process program: blocks run in order, each repeated.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Program {
    /// The blocks, in file order.
    pub blocks: Vec<Block>,
}

/// The request lines after one `loop K` line, executed in order `repeat` times.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Block {
    /// How many times the block runs (`K`, possibly 0).
    pub repeat: u32,
    /// The requests of one iteration.
    pub requests: Vec<Request>,
}

/// One request line: use a resource (or wait) for a sampled time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Request {
    /// The resource asked for; `None` is `idle`, a pure delay.
    pub resource: Option<String>,
    /// The mean duration, seconds.
    pub mean: f64,
    /// The spread, seconds: standard deviation (normal) or half-width (uniform); ignored by
    /// the exponential.
    pub width: f64,
    /// The distribution the duration is drawn from.
    pub dist: Dist,
}

/// The distribution of a request's duration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dist {
    /// Normal with standard deviation `width` (`NORM`, `NORMAL`).
    Normal,
    /// Uniform on `[mean − width, mean + width]` (`UNIF`, `UNIFORM`).
    Uniform,
    /// Exponential with the given mean (`EXP`, `EXPONENTIAL`).
    Exponential,
}

/// A program line that does not follow the syntax.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("line {line}: {kind}")]
#[non_exhaustive]
pub struct ProgramError {
    /// The line, from 1, within the text parsed.
    pub line: usize,
    /// What was wrong.
    pub kind: ProgramErrorKind,
}

/// What was wrong with a program line.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum ProgramErrorKind {
    /// Something other than the expected header or value was found.
    #[error("expected {expected}, found {found}")]
    Expected {
        /// What the line should hold.
        expected: &'static str,
        /// What it held, quoted, or "the end of the file".
        found: String,
    },
    /// A `# Priority:` or `# Requests:` header among the requests.
    #[error("the header \"{0}\" may only come before the requests")]
    MisplacedHeader(String),
    /// A line with the wrong number of fields.
    #[error("expected `{expected}`, found {found} field(s)")]
    Fields {
        /// The line's shape.
        expected: &'static str,
        /// The number of fields found.
        found: usize,
    },
    /// A resource name with characters outside `[A-Za-z0-9_.-]`.
    #[error("resource name \"{0}\": expected letters, digits, `_`, `.` or `-`")]
    Name(String),
    /// A number field that does not hold a suitable number.
    #[error("{field}: expected {expected}, found \"{found}\"")]
    Number {
        /// The field: mean, width, loop count or priority.
        field: &'static str,
        /// The numbers allowed, in words.
        expected: &'static str,
        /// The text found.
        found: String,
    },
    /// An unknown distribution name.
    #[error(
        "distribution: expected NORM, UNIF or EXP (or NORMAL, UNIFORM, EXPONENTIAL), found \"{0}\""
    )]
    Dist(String),
}

impl Program {
    /// Parses a program body: `loop K` lines and request lines, `#` comments.
    pub fn parse(text: &str) -> Result<Program, ProgramError> {
        parse_body(text).map(|parsed| parsed.program)
    }

    /// The requests in execution order, loops expanded.
    pub fn requests(&self) -> impl Iterator<Item = &Request> {
        self.blocks
            .iter()
            .flat_map(|block| (0..block.repeat).flat_map(move |_| block.requests.iter()))
    }

    /// The number of requests executed, loops expanded.
    pub fn len(&self) -> usize {
        self.blocks.iter().fold(0, |total, block| {
            total.saturating_add((block.repeat as usize).saturating_mul(block.requests.len()))
        })
    }

    /// Whether the program executes no request at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Parses a program file in the paper's layout (`# Priority:`, the value, `# Requests:`, the
/// body) into its priority (relative entitlement) and program.
pub fn parse_program_file(text: &str) -> Result<(f64, Program), ProgramError> {
    parse_file(text).map(|(priority, parsed)| (priority, parsed.program))
}

/// A parsed program and the resources it names, in order of first appearance, each with the
/// line of that appearance.
#[derive(Debug)]
pub(crate) struct Parsed {
    pub program: Program,
    pub uses: Vec<(String, usize)>,
}

/// Parses a program body; see [`Program::parse`].
pub(crate) fn parse_body(text: &str) -> Result<Parsed, ProgramError> {
    let mut parser = Parser::default();
    for (line, content) in numbered(text) {
        parser.line(line, content)?;
    }
    Ok(parser.finish())
}

/// Parses the paper's file layout; see [`parse_program_file`].
pub(crate) fn parse_file(text: &str) -> Result<(f64, Parsed), ProgramError> {
    let end = text.lines().count().max(1);
    let mut lines = numbered(text);
    let mut preamble = lines.by_ref().filter(|(_, content)| !is_comment(content));
    expect_header(preamble.next(), Header::Priority, end)?;
    let priority = match preamble.next() {
        Some((line, content)) => number(line, content, "priority", "a number > 0", |v| v > 0.0)?,
        None => return Err(expected(end, "the priority", None)),
    };
    expect_header(preamble.next(), Header::Requests, end)?;
    let mut parser = Parser::default();
    for (line, content) in lines {
        parser.line(line, content)?;
    }
    Ok((priority, parser.finish()))
}

/// The two headers of the paper's file layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Header {
    Priority,
    Requests,
}

impl Header {
    fn text(self) -> &'static str {
        match self {
            Header::Priority => "the header `# Priority:`",
            Header::Requests => "the header `# Requests:`",
        }
    }
}

/// The header on a line, if it is one: `#`, optional spaces, the word and a colon.
fn header(content: &str) -> Option<Header> {
    let (word, _) = content.strip_prefix('#')?.trim_start().split_once(':')?;
    if word.eq_ignore_ascii_case("priority") {
        Some(Header::Priority)
    } else if word.eq_ignore_ascii_case("requests") {
        Some(Header::Requests)
    } else {
        None
    }
}

/// Whether a line is a comment: `#` but not a header.
fn is_comment(content: &str) -> bool {
    content.starts_with('#') && header(content).is_none()
}

/// The non-blank lines of `text`, trimmed, with their numbers from 1.
fn numbered(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(index, content)| (index + 1, content.trim()))
        .filter(|(_, content)| !content.is_empty())
}

/// Checks that the next line of the preamble is `want`.
fn expect_header(
    next: Option<(usize, &str)>,
    want: Header,
    end: usize,
) -> Result<(), ProgramError> {
    match next {
        Some((_, content)) if header(content) == Some(want) => Ok(()),
        Some((line, content)) => Err(expected(line, want.text(), Some(content))),
        None => Err(expected(end, want.text(), None)),
    }
}

/// An [`ProgramErrorKind::Expected`] error; `found` `None` is the end of the file.
fn expected(line: usize, expected: &'static str, found: Option<&str>) -> ProgramError {
    let found = found.map_or_else(|| "the end of the file".to_owned(), |f| format!("\"{f}\""));
    ProgramError {
        line,
        kind: ProgramErrorKind::Expected { expected, found },
    }
}

/// Parses a finite number that satisfies `valid`.
fn number(
    line: usize,
    text: &str,
    field: &'static str,
    expected: &'static str,
    valid: impl Fn(f64) -> bool,
) -> Result<f64, ProgramError> {
    match text.parse::<f64>() {
        Ok(value) if value.is_finite() && valid(value) => Ok(value),
        _ => Err(ProgramError {
            line,
            kind: ProgramErrorKind::Number {
                field,
                expected,
                found: text.to_owned(),
            },
        }),
    }
}

/// Whether `name` is a valid resource name: `[A-Za-z0-9_.-]+`.
pub(crate) fn is_valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// The distribution named by `text`, case-insensitive, aliases included.
fn dist(text: &str) -> Option<Dist> {
    match text.to_ascii_uppercase().as_str() {
        "NORM" | "NORMAL" => Some(Dist::Normal),
        "UNIF" | "UNIFORM" => Some(Dist::Uniform),
        "EXP" | "EXPONENTIAL" => Some(Dist::Exponential),
        _ => None,
    }
}

/// Builds a program from body lines, one at a time.
#[derive(Debug, Default)]
struct Parser {
    blocks: Vec<Block>,
    uses: Vec<(String, usize)>,
}

impl Parser {
    /// Takes one non-blank, trimmed body line.
    fn line(&mut self, line: usize, content: &str) -> Result<(), ProgramError> {
        if content.starts_with('#') {
            return match header(content) {
                Some(_) => Err(ProgramError {
                    line,
                    kind: ProgramErrorKind::MisplacedHeader(content.to_owned()),
                }),
                None => Ok(()),
            };
        }
        let fields: Vec<&str> = content.split_whitespace().collect();
        if fields
            .first()
            .is_some_and(|f| f.eq_ignore_ascii_case("loop"))
        {
            self.open_block(line, &fields)
        } else {
            self.request(line, &fields)
        }
    }

    /// A `loop K` line: opens a new block.
    fn open_block(&mut self, line: usize, fields: &[&str]) -> Result<(), ProgramError> {
        let [_, count] = fields else {
            return Err(fields_error(line, "loop COUNT", fields.len()));
        };
        let repeat = count.parse::<u32>().map_err(|_| ProgramError {
            line,
            kind: ProgramErrorKind::Number {
                field: "loop count",
                expected: "a whole number ≥ 0",
                found: (*count).to_owned(),
            },
        })?;
        self.blocks.push(Block {
            repeat,
            requests: Vec::new(),
        });
        Ok(())
    }

    /// A request line: appended to the last block, or to an implicit `loop 1` before any.
    fn request(&mut self, line: usize, fields: &[&str]) -> Result<(), ProgramError> {
        let &[name, mean, width, kind] = fields else {
            return Err(fields_error(line, "RESOURCE MEAN WIDTH DIST", fields.len()));
        };
        if !is_valid_name(name) {
            return Err(ProgramError {
                line,
                kind: ProgramErrorKind::Name(name.to_owned()),
            });
        }
        let mean = number(line, mean, "mean", REQUEST_EXPECTED, request_value)?;
        let width = number(line, width, "width", REQUEST_EXPECTED, request_value)?;
        let dist = dist(kind).ok_or_else(|| ProgramError {
            line,
            kind: ProgramErrorKind::Dist(kind.to_owned()),
        })?;
        let resource = (!name.eq_ignore_ascii_case("idle")).then(|| name.to_owned());
        if let Some(name) = &resource {
            if !self.uses.iter().any(|(used, _)| used == name) {
                self.uses.push((name.clone(), line));
            }
        }
        let request = Request {
            resource,
            mean,
            width,
            dist,
        };
        match self.blocks.last_mut() {
            Some(block) => block.requests.push(request),
            None => self.blocks.push(Block {
                repeat: 1,
                requests: vec![request],
            }),
        }
        Ok(())
    }

    /// The program and the resources it names.
    fn finish(self) -> Parsed {
        Parsed {
            program: Program {
                blocks: self.blocks,
            },
            uses: self.uses,
        }
    }
}

/// A [`ProgramErrorKind::Fields`] error.
fn fields_error(line: usize, expected: &'static str, found: usize) -> ProgramError {
    ProgramError {
        line,
        kind: ProgramErrorKind::Fields { expected, found },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> ProgramError {
        Program::parse(text).expect_err("the program should be rejected")
    }

    #[test]
    fn blocks_run_in_order_each_repeated() {
        let program = Program::parse(
            "loop 1\nCPU_CS 2 0 NORM\nloop 3\nDISK 0.1 0.05 NORM\nCPU_CS 0.1 0 UNIF\n",
        )
        .unwrap();
        assert_eq!(program.blocks.len(), 2);
        assert_eq!(program.blocks[1].repeat, 3);
        assert_eq!(program.len(), 7);
        let names: Vec<_> = program
            .requests()
            .map(|r| r.resource.as_deref().unwrap())
            .collect();
        assert_eq!(
            names,
            ["CPU_CS", "DISK", "CPU_CS", "DISK", "CPU_CS", "DISK", "CPU_CS"]
        );
        assert_eq!(program.requests().nth(1).unwrap().width, 0.05);
    }

    #[test]
    fn lines_before_any_loop_form_an_implicit_loop_1() {
        let program = Program::parse("idle 5 0 NORM\nCPU 1 0 NORM\nloop 2\nCPU 1 0 NORM").unwrap();
        assert_eq!(program.blocks[0].repeat, 1);
        assert_eq!(program.blocks[0].requests.len(), 2);
        assert_eq!(program.len(), 4);
    }

    #[test]
    fn keywords_and_distributions_ignore_case_and_accept_aliases() {
        let text = "LOOP 1\nIdle 1 0 norm\nA 1 0 Normal\nB 1 0 unif\nC 1 0 UNIFORM\nD 1 0 exp\nE 1 0 Exponential";
        let program = Program::parse(text).unwrap();
        let dists: Vec<_> = program.requests().map(|r| r.dist).collect();
        use Dist::*;
        assert_eq!(
            dists,
            [Normal, Normal, Uniform, Uniform, Exponential, Exponential]
        );
        assert_eq!(program.requests().next().unwrap().resource, None);
    }

    #[test]
    fn comments_blank_lines_and_spaces_are_skipped() {
        let text = "# a comment\n\n   loop 2  \n  # another\n\tCPU_CS   0.5\t0.1 NORM  \n\n";
        let program = Program::parse(text).unwrap();
        assert_eq!(program.len(), 2);
        assert_eq!(program.blocks[0].requests[0].mean, 0.5);
    }

    #[test]
    fn loop_0_and_empty_programs_execute_nothing() {
        let program = Program::parse("loop 0\nCPU 1 0 NORM\nloop 4\n").unwrap();
        assert_eq!(program.blocks.len(), 2);
        assert!(program.is_empty());
        assert_eq!(program.requests().count(), 0);
        assert!(Program::parse("# nothing\n").unwrap().is_empty());
    }

    #[test]
    fn resource_names_are_case_sensitive_and_listed_by_first_use() {
        let parsed = parse_body(
            "loop 2\ncpu 1 0 NORM\nDISK 1 0 NORM\nidle 1 0 NORM\nCPU 1 0 NORM\ncpu 1 0 NORM",
        )
        .unwrap();
        let uses: Vec<_> = parsed.uses.iter().map(|(n, l)| (n.as_str(), *l)).collect();
        assert_eq!(uses, [("cpu", 2), ("DISK", 3), ("CPU", 5)]);
    }

    #[test]
    fn each_bad_line_is_named_with_what_was_expected() {
        let cases = [
            ("loop 1\nCPU 1 0\n", 2, "expected `RESOURCE MEAN WIDTH DIST`, found 3 field(s)"),
            ("CPU 1 0 NORM extra\n", 1, "expected `RESOURCE MEAN WIDTH DIST`, found 5 field(s)"),
            ("\n\nCPU -1 0 NORM", 3, "mean: expected a number from 0 to 1e9 (seconds), found \"-1\""),
            ("CPU 1 -0.5 NORM", 1, "width: expected a number from 0 to 1e9 (seconds), found \"-0.5\""),
            ("CPU nan 0 NORM", 1, "mean: expected a number from 0 to 1e9 (seconds), found \"nan\""),
            ("CPU 1 inf NORM", 1, "width: expected a number from 0 to 1e9 (seconds), found \"inf\""),
            ("CPU 1e300 0 NORM", 1, "mean: expected a number from 0 to 1e9 (seconds), found \"1e300\""),
            ("CPU 1 2e9 NORM", 1, "width: expected a number from 0 to 1e9 (seconds), found \"2e9\""),
            ("CPU 1 0 GAUSS", 1, "distribution: expected NORM, UNIF or EXP (or NORMAL, UNIFORM, EXPONENTIAL), found \"GAUSS\""),
            ("C/PU 1 0 NORM", 1, "resource name \"C/PU\": expected letters, digits, `_`, `.` or `-`"),
            ("# c\nloop -1", 2, "loop count: expected a whole number ≥ 0, found \"-1\""),
            ("loop 2.5", 1, "loop count: expected a whole number ≥ 0, found \"2.5\""),
            ("loop", 1, "expected `loop COUNT`, found 1 field(s)"),
            ("loop 1 2", 1, "expected `loop COUNT`, found 3 field(s)"),
            ("CPU 1 0 NORM\n# Priority:", 2, "the header \"# Priority:\" may only come before the requests"),
        ];
        for (text, line, message) in cases {
            let error = error(text);
            assert_eq!(error.line, line, "{text:?}");
            assert_eq!(
                error.to_string(),
                format!("line {line}: {message}"),
                "{text:?}"
            );
        }
    }

    #[test]
    fn the_papers_layout_gives_priority_and_program() {
        let text = "# Fig. 1\n#Priority: (relative)\n34\n# a comment\n# REQUESTS:\nloop 1\nCPU_CS 2 0 NORM\nloop 40\nDISK_CS 0.1 0.05 NORM\nCPU_CS 0.1 0.05 NORM\n";
        let (priority, program) = parse_program_file(text).unwrap();
        assert_eq!(priority, 34.0);
        assert_eq!(program.len(), 81);
    }

    #[test]
    fn the_papers_layout_needs_its_headers_and_a_positive_priority() {
        let cases = [
            ("34\n# Requests:\n", 1, "expected the header `# Priority:`, found \"34\""),
            ("", 1, "expected the header `# Priority:`, found the end of the file"),
            ("# Priority:\n", 1, "expected the priority, found the end of the file"),
            ("# Priority:\n0\n# Requests:\n", 2, "priority: expected a number > 0, found \"0\""),
            ("# Priority:\n-3\n", 2, "priority: expected a number > 0, found \"-3\""),
            ("# Priority:\n1\nloop 1\n", 3, "expected the header `# Requests:`, found \"loop 1\""),
            ("# Priority:\n1\n\n", 3, "expected the header `# Requests:`, found the end of the file"),
            ("# Priority:\n1\n# Requests:\nX 1 0 FOO\n", 4, "distribution: expected NORM, UNIF or EXP (or NORMAL, UNIFORM, EXPONENTIAL), found \"FOO\""),
        ];
        for (text, line, message) in cases {
            let error = parse_program_file(text).expect_err(text);
            assert_eq!(
                error.to_string(),
                format!("line {line}: {message}"),
                "{text:?}"
            );
        }
    }
}
