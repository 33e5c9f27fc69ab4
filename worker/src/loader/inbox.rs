//! The app's messages as the load worker reads them: `[json, File | File[] | ArrayBuffer?]`
//! arrays whose JSON is a [`protocol::ToWorker`], the transport having told what lies beside it
//! ([`Attached`]). Whether the attachment fits the message (`Read` with a `File`, `ReadRun` with
//! `File`s, `Bytes` with an `ArrayBuffer`) is `Loader::message`'s to check.

use super::Attached;
use protocol::ToWorker;

/// One message from the app, `json` its first element (if a string): the message and what came
/// beside it.
///
/// # Errors
/// A message without a JSON string, or one that is no `ToWorker`, in words (for the console:
/// no reply can name its load).
pub fn decode<F, B>(json: Option<&str>, attached: Attached<F, B>) -> Result<(ToWorker, Attached<F, B>), String> {
    let json = json.ok_or("worker: message without a JSON string")?;
    match serde_json::from_str::<ToWorker>(json) {
        Ok(msg) => Ok((msg, attached)),
        Err(e) => Err(format!("worker: bad message {e}: {json:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Message = Result<(ToWorker, Attached<&'static str, u8>), String>;

    #[test]
    fn a_message_keeps_what_came_beside_it() {
        let read: Message = decode(Some(r#"{"type":"Read","id":4,"workers":2}"#), Attached::File("t.json"));
        assert!(matches!(read, Ok((ToWorker::Read { id: 4, workers: Some(2) }, Attached::File("t.json")))), "{read:?}");
        let cancel: Message = decode(Some(r#"{"type":"Cancel","id":5}"#), Attached::None);
        assert!(matches!(cancel, Ok((ToWorker::Cancel { id: 5 }, Attached::None))), "{cancel:?}");
    }

    #[test]
    fn unreadable_messages_are_errors_in_words() {
        let none: Message = decode(None, Attached::Buffer(1));
        assert_eq!(none.err().as_deref(), Some("worker: message without a JSON string"));
        let bad: Message = decode(Some(r#"{"type":"Nope"}"#), Attached::None);
        let Err(message) = bad else { panic!("decoded") };
        assert!(message.starts_with("worker: bad message unknown variant `Nope`") && message.ends_with(r#": "{\"type\":\"Nope\"}""#), "{message}");
    }
}
