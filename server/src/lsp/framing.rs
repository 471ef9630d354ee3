//! The framing layer in front of tower-lsp-server (protocol robustness).
//!
//! tower-lsp-server 0.23 reads stdin through a `tokio_util` `FramedRead`; a frame its codec
//! cannot decode (a bad header, invalid JSON, JSON that is not a JSON-RPC message) is
//! answered once and then ends the stream, so the server stops reading: one malformed
//! message silences the session. Its codec also buffers a whole body of whatever
//! `Content-Length` announces before looking at it, and its service turns the
//! `MethodNotFound` answer to any `$/…` method into silence, even for a request with an id.
//!
//! So nothing reaches it unchecked. [`frame_input`] reads the client's bytes, and
//! - a header block that is not `Name: value` lines with one decimal `Content-Length`
//!   (header lines at most [`MAX_HEADER_LINE`] bytes, at most [`MAX_HEADERS`] lines) is
//!   answered with `-32700` (parse error, id `null`); the reader then skips to the next
//!   `Content-Length:` it sees and carries on;
//! - a `Content-Length` above [`MAX_MESSAGE`] (64 MiB) is answered with `-32600` (invalid
//!   request, id `null`) and exactly that many bytes are read and thrown away through a
//!   fixed 8 KiB buffer, never stored: framing stays in step, memory stays bounded and the
//!   session (with the editor's unsaved buffers) survives. Closing the connection instead
//!   would lose the session for a client bug; the skipped bytes cost no more than the
//!   client spent sending them;
//! - a body that is not UTF-8 JSON is answered with `-32700`, id `null` (JSON-RPC 2.0 §5.1);
//! - JSON that is not a JSON-RPC 2.0 request, notification or response (as
//!   tower-lsp-server's own types read it) is answered with `-32600`, with the message's
//!   `id` when it has a usable one, else `null`;
//! - a `$/…` request with an id is answered with `-32601` (method not found): LSP defines
//!   `$/` methods as notifications only, and every request gets exactly one reply;
//! - everything else is re-encoded from tower-lsp-server's own types and passed on, so its
//!   codec never sees a frame it would reject.
//!
//! Output: tower-lsp-server writes whole frames into a pipe; [`pump_output`] cuts them
//! apart and [`write_output`] writes them, and this layer's own replies, one whole frame at
//! a time, so replies never interleave inside a frame.

use std::io;

use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt,
};
use tokio::sync::mpsc;
use tower_lsp_server::jsonrpc::{Id, Request, Response};

/// Largest message body accepted, in bytes (64 MiB). Larger bodies are skipped unread.
/// The YAML checker refuses texts over 8 MiB anyway; 64 MiB leaves room for JSON
/// escaping of such a text (up to 6 bytes per character) in a `didOpen`.
pub const MAX_MESSAGE: u64 = 64 << 20;

/// Longest header line kept, in bytes; a longer line is a bad header (and is skipped
/// without being stored).
pub const MAX_HEADER_LINE: usize = 8 << 10;

/// Most header lines in one header block.
pub const MAX_HEADERS: usize = 32;

/// One unit read from the client.
#[derive(Debug, PartialEq)]
pub enum Frame {
    /// A body of at most [`MAX_MESSAGE`] bytes.
    Body(Vec<u8>),
    /// A body over [`MAX_MESSAGE`] bytes (its announced length), skipped.
    Oversize(u64),
    /// A header block that cannot be read; the reason, in our own words.
    BadHeader(&'static str),
    /// End of input (also in the middle of a frame).
    Eof,
}

/// One line of at most [`MAX_HEADER_LINE`] bytes without its `\n` (and `\r`); `Ok(None)`
/// at end of input; an overlong line is consumed to its end and returned as `Err(())`
/// inside the `Ok`.
async fn read_line<R: AsyncBufRead + Unpin>(r: &mut R) -> io::Result<Option<Result<Vec<u8>, ()>>> {
    let mut line = Vec::new();
    let mut overlong = false;
    let mut any = false;
    loop {
        let buf = r.fill_buf().await?;
        if buf.is_empty() {
            return Ok(if any {
                Some(if overlong { Err(()) } else { Ok(line) })
            } else {
                None
            });
        }
        any = true;
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if !overlong {
            if line.len() + chunk.len() > MAX_HEADER_LINE {
                overlong = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let used = done.unwrap_or(buf.len());
        r.consume(used);
        if done.is_some() {
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok(Some(if overlong { Err(()) } else { Ok(line) }));
        }
    }
}

/// Where a `Content-Length:` header starts in `line` (ASCII case-insensitive).
fn content_length_at(line: &[u8]) -> Option<usize> {
    const NAME: &[u8] = b"content-length:";
    line.windows(NAME.len())
        .position(|w| w.eq_ignore_ascii_case(NAME))
}

/// A bad header block: answer it, then skip to the next `Content-Length:`.
fn bad(resync: &mut bool, reason: &'static str) -> io::Result<Frame> {
    *resync = true;
    Ok(Frame::BadHeader(reason))
}

/// Reads one frame. `resync` is the reader's state: after a bad header block it is set,
/// and lines are skipped until one holding `Content-Length:`, where the next block starts.
/// Bodies over `max` bytes are read into an 8 KiB buffer and dropped.
pub async fn read_frame<R: AsyncBufRead + Unpin>(
    r: &mut R,
    max: u64,
    resync: &mut bool,
) -> io::Result<Frame> {
    let mut length: Option<u64> = None;
    let mut headers = 0usize;
    loop {
        let Some(line) = read_line(r).await? else {
            return Ok(Frame::Eof);
        };
        let mut line = match line {
            Ok(l) => l,
            Err(()) if *resync => continue,
            Err(()) => return bad(resync, "header line too long"),
        };
        if *resync {
            match content_length_at(&line) {
                Some(at) => {
                    line.drain(..at);
                    *resync = false;
                }
                None => continue,
            }
        }
        if line.is_empty() {
            if headers == 0 {
                // Blank lines between messages are tolerated.
                continue;
            }
            break;
        }
        headers += 1;
        if headers > MAX_HEADERS {
            return bad(resync, "too many header lines");
        }
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            return bad(resync, "header line without `:`");
        };
        let (name, value) = (&line[..colon], &line[colon + 1..]);
        if name.eq_ignore_ascii_case(b"content-length") {
            let v = std::str::from_utf8(value).map(str::trim).unwrap_or("");
            if length.is_some() {
                return bad(resync, "more than one Content-Length header");
            }
            match v.parse::<u64>() {
                Ok(n) if v.bytes().all(|b| b.is_ascii_digit()) => length = Some(n),
                _ => return bad(resync, "Content-Length is not a decimal number"),
            }
        }
        // Other headers (Content-Type) are ignored: the body is read as UTF-8 either way.
    }
    let Some(len) = length else {
        return bad(resync, "no Content-Length header");
    };
    if len > max {
        let skipped = tokio::io::copy(&mut (&mut *r).take(len), &mut tokio::io::sink()).await?;
        return Ok(if skipped < len {
            Frame::Eof
        } else {
            Frame::Oversize(len)
        });
    }
    let mut body = Vec::new();
    (&mut *r).take(len).read_to_end(&mut body).await?;
    if (body.len() as u64) < len {
        return Ok(Frame::Eof);
    }
    Ok(Frame::Body(body))
}

/// `Content-Length: N\r\n\r\n` + `body`.
pub fn encode(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// An error response frame: `{"jsonrpc":"2.0","id":…,"error":{"code":…,"message":…}}`.
fn error_frame(id: &Id, code: i64, message: &str) -> Vec<u8> {
    let v = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    encode(v.to_string().as_bytes())
}

/// What to do with one body: pass a re-encoded message on, or answer it here.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// The message, re-serialised from tower-lsp-server's types.
    Forward(Vec<u8>),
    /// An error response frame for the client.
    Reply(Vec<u8>),
}

/// Judges one body (see the module docs for the rules). The body is read straight into
/// tower-lsp-server's own types (a response first, as its codec does), so a valid message
/// costs one parse, as it would without this layer; only a rejected body is parsed again
/// as plain JSON, to tell a parse error from an invalid request and to find its id.
pub fn judge(body: &[u8]) -> Verdict {
    if let Ok(resp) = serde_json::from_slice::<Response>(body) {
        return forward(&resp);
    }
    if let Ok(req) = serde_json::from_slice::<Request>(body)
        && !req.method().is_empty()
    {
        if req.method().starts_with("$/")
            && let Some(id) = req.id()
        {
            return Verdict::Reply(error_frame(id, -32601, "Method not found"));
        }
        return forward(&req);
    }
    match serde_json::from_slice::<Value>(body) {
        Err(_) => Verdict::Reply(error_frame(
            &Id::Null,
            -32700,
            "Parse error: the body is not UTF-8 JSON",
        )),
        Ok(value) => {
            let id = value
                .get("id")
                .and_then(|i| Id::deserialize(i).ok())
                .unwrap_or(Id::Null);
            Verdict::Reply(error_frame(
                &id,
                -32600,
                "Invalid Request: not a JSON-RPC 2.0 request, notification or response",
            ))
        }
    }
}

/// A message re-serialised from tower-lsp-server's types, so its codec reads it back.
fn forward<T: serde::Serialize>(msg: &T) -> Verdict {
    match serde_json::to_vec(msg) {
        Ok(b) => Verdict::Forward(b),
        Err(_) => Verdict::Reply(error_frame(&Id::Null, -32603, "Internal error")),
    }
}

/// Reads the client's frames from `input` until its end, writing accepted messages to
/// `server` (tower-lsp-server's input) and this layer's replies to `replies`. Returns when
/// the input ends, fails, or the server stops reading.
pub async fn frame_input<I, W>(input: I, mut server: W, replies: mpsc::Sender<Vec<u8>>)
where
    I: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut r = tokio::io::BufReader::with_capacity(64 << 10, input);
    let mut resync = false;
    loop {
        let frame = match read_frame(&mut r, MAX_MESSAGE, &mut resync).await {
            Ok(f) => f,
            Err(e) => {
                tracing::warn!("reading the client's input failed: {e}");
                break;
            }
        };
        let reply = match frame {
            Frame::Eof => break,
            Frame::BadHeader(reason) => {
                tracing::warn!(
                    "bad message header ({reason}); skipping to the next Content-Length"
                );
                error_frame(&Id::Null, -32700, &format!("Parse error: {reason}"))
            }
            Frame::Oversize(n) => {
                tracing::warn!("message of {n} bytes over the {MAX_MESSAGE}-byte limit skipped");
                error_frame(
                    &Id::Null,
                    -32600,
                    &format!(
                        "Invalid Request: message of {n} bytes exceeds the limit of {MAX_MESSAGE} bytes"
                    ),
                )
            }
            Frame::Body(body) => match judge(&body) {
                Verdict::Forward(msg) => {
                    if server.write_all(&encode(&msg)).await.is_err()
                        || server.flush().await.is_err()
                    {
                        break;
                    }
                    continue;
                }
                Verdict::Reply(frame) => {
                    tracing::warn!("malformed JSON-RPC message answered with an error");
                    frame
                }
            },
        };
        if replies.send(reply).await.is_err() {
            break;
        }
    }
    let _ = server.shutdown().await;
}

/// Cuts tower-lsp-server's output into whole frames and sends each to `frames`. After the
/// writer is gone it keeps reading (and dropping) so the server never blocks on a full
/// pipe. Returns at the end of the server's output.
pub async fn pump_output<R>(server: R, frames: mpsc::Sender<Vec<u8>>)
where
    R: AsyncRead + Unpin,
{
    let mut r = tokio::io::BufReader::with_capacity(64 << 10, server);
    let mut resync = false;
    loop {
        match read_frame(&mut r, u64::MAX, &mut resync).await {
            Ok(Frame::Body(body)) => {
                // A closed channel means stdout is gone: keep draining.
                let _ = frames.send(encode(&body)).await;
            }
            Ok(Frame::Eof) | Err(_) => break,
            Ok(Frame::BadHeader(_) | Frame::Oversize(_)) => {
                tracing::error!("the server wrote a frame the framing layer cannot read");
            }
        }
    }
}

/// Writes each frame from `frames` to `output` and flushes; returns when every sender is
/// gone or the output fails.
pub async fn write_output<O>(mut frames: mpsc::Receiver<Vec<u8>>, output: O)
where
    O: AsyncWrite,
{
    let mut output = std::pin::pin!(output);
    while let Some(f) = frames.recv().await {
        if output.write_all(&f).await.is_err() || output.flush().await.is_err() {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;

    async fn frames(input: &[u8], max: u64) -> Vec<Frame> {
        let mut r = tokio::io::BufReader::new(input);
        let mut resync = false;
        let mut out = Vec::new();
        loop {
            let f = read_frame(&mut r, max, &mut resync).await.unwrap();
            if f == Frame::Eof {
                return out;
            }
            out.push(f);
        }
    }

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
    }

    #[test]
    fn reads_frames_and_recovers_from_bad_headers() {
        let input = b"Content-Length: 2\r\n\r\n{}\
            garbage line\r\n\r\nmore garbage {\"x\":1}Content-Length: 3\r\n\r\n[1]\
            Content-Length: x\r\n\r\nzzContent-Length: 1\r\n\r\n1\
            content-length:10\r\n\r\n0123456789Content-Length: 2\r\n\r\nok";
        let got = rt().block_on(frames(input, 5));
        assert_eq!(
            got,
            vec![
                Frame::Body(b"{}".to_vec()),
                Frame::BadHeader("header line without `:`"),
                Frame::Body(b"[1]".to_vec()),
                Frame::BadHeader("Content-Length is not a decimal number"),
                Frame::Body(b"1".to_vec()),
                Frame::Oversize(10),
                Frame::Body(b"ok".to_vec()),
            ]
        );
    }

    #[test]
    fn bounded_header_lines() {
        let mut input = vec![b'a'; MAX_HEADER_LINE * 3];
        input.extend_from_slice(b"\r\n\r\nContent-Length: 1\r\n\r\n7");
        let got = rt().block_on(frames(&input, 5));
        assert_eq!(
            got,
            vec![
                Frame::BadHeader("header line too long"),
                Frame::Body(b"7".to_vec())
            ]
        );
        let mut many = Vec::new();
        for _ in 0..=MAX_HEADERS {
            many.extend_from_slice(b"X-A: 1\r\n");
        }
        many.extend_from_slice(b"Content-Length: 1\r\n\r\n7Content-Length: 1\r\n\r\n8");
        let got = rt().block_on(frames(&many, 5));
        assert_eq!(
            got,
            vec![
                Frame::BadHeader("too many header lines"),
                Frame::Body(b"7".to_vec()),
                Frame::Body(b"8".to_vec())
            ]
        );
    }

    fn reply(v: Verdict) -> Value {
        match v {
            Verdict::Reply(f) => {
                let at = f.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
                serde_json::from_slice(&f[at + 4..]).unwrap()
            }
            Verdict::Forward(b) => panic!("forwarded {}", String::from_utf8_lossy(&b)),
        }
    }

    #[test]
    fn judges_bodies() {
        let r = reply(judge(b"{not json"));
        assert_eq!(
            (r["id"].clone(), r["error"]["code"].clone()),
            (Value::Null, json!(-32700))
        );
        let r = reply(judge(b"\xff\xfe"));
        assert_eq!(r["error"]["code"], -32700);
        for (body, id) in [
            (&br#"42"#[..], Value::Null),
            (br#"{"foo":1}"#, Value::Null),
            (br#"{"jsonrpc":"1.0","method":"x","id":3}"#, json!(3)),
            (br#"{"jsonrpc":"2.0","method":5,"id":"a"}"#, json!("a")),
            (br#"[{"jsonrpc":"2.0","method":"x","id":1}]"#, Value::Null),
        ] {
            let r = reply(judge(body));
            assert_eq!(
                r["error"]["code"],
                -32600,
                "{}",
                String::from_utf8_lossy(body)
            );
            assert_eq!(r["id"], id);
        }
        let r = reply(judge(br#"{"jsonrpc":"2.0","method":"$/foo","id":9}"#));
        assert_eq!(
            (r["id"].clone(), r["error"]["code"].clone()),
            (json!(9), json!(-32601))
        );
        for ok in [
            &br#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}"#[..],
            br#"{"jsonrpc":"2.0","method":"shutdown","id":1}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":null}"#,
        ] {
            assert!(
                matches!(judge(ok), Verdict::Forward(_)),
                "{}",
                String::from_utf8_lossy(ok)
            );
        }
    }
}
