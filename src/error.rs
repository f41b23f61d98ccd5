//! The one error enum every failed request maps to; the HTTP layer's
//! `recover` turns it into a status and a JSON body.

use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApiError {
    /// 404 `{"error": "<path> is not a valid path"}` (decoded path).
    UnknownPath(String),
    /// 405 on a known path; `allow` is the `Allow` header of what its
    /// endpoint takes, `usable` the same in words.
    MethodNotAllowed {
        method: String,
        path: String,
        allow: &'static str,
        usable: &'static str,
    },
    /// 400: a path segment is not UTF-8 after percent-decoding.
    PathNotUtf8,
    /// 400 `{"response": "Invalid list id"}`.
    InvalidListId,
    /// 400 `{"response": "<text naming the parameter>"}`.
    BadParameter(String),
    /// 400 `{"response": "<what is wrong with the body>"}` (32's body).
    BadBody(String),
    /// 413 `{"response": …}`: a body over `max` bytes (32's body).
    BodyTooLarge { max: usize },
    /// 404 `{"response": "ENS name not valid or does not exist"}`.
    UnknownName,
    /// 404 `{"response": "No User Found"}`.
    NoUserFound,
    /// 404 `{"response": "Invalid query address"}`: 29's `leader` is
    /// neither an address nor a known name.
    InvalidQueryAddress,
    /// 503 before the first snapshot is loaded.
    NotReady,
    /// 414: path + query longer than the configured maximum.
    UriTooLong { max: usize },
    /// 500: a handler panicked (a bug; logged).
    Internal,
}

impl ApiError {
    pub fn status(&self) -> u16 {
        match self {
            ApiError::UnknownPath(_)
            | ApiError::UnknownName
            | ApiError::NoUserFound
            | ApiError::InvalidQueryAddress => 404,
            ApiError::MethodNotAllowed { .. } => 405,
            ApiError::PathNotUtf8
            | ApiError::InvalidListId
            | ApiError::BadParameter(_)
            | ApiError::BadBody(_) => 400,
            ApiError::BodyTooLarge { .. } => 413,
            ApiError::NotReady => 503,
            ApiError::UriTooLong { .. } => 414,
            ApiError::Internal => 500,
        }
    }

    /// The JSON body: `{"error": …}` for routing errors, `{"response": …}`
    /// for the API's own errors, as the public API answers.
    pub fn body(&self) -> String {
        let (key, text) = match self {
            ApiError::UnknownPath(path) => ("error", format!("{path} is not a valid path")),
            ApiError::MethodNotAllowed {
                method,
                path,
                usable,
                ..
            } => (
                "error",
                format!("{method} is not allowed on {path}; use {usable}"),
            ),
            ApiError::PathNotUtf8 => ("response", "path is not valid UTF-8".to_owned()),
            ApiError::InvalidListId => ("response", "Invalid list id".to_owned()),
            ApiError::BadParameter(text) | ApiError::BadBody(text) => ("response", text.clone()),
            ApiError::BodyTooLarge { max } => {
                ("response", format!("the body is larger than {max} bytes"))
            }
            ApiError::UnknownName => (
                "response",
                "ENS name not valid or does not exist".to_owned(),
            ),
            ApiError::NoUserFound => ("response", "No User Found".to_owned()),
            ApiError::InvalidQueryAddress => ("response", "Invalid query address".to_owned()),
            ApiError::NotReady => ("error", "no snapshot is loaded yet".to_owned()),
            ApiError::UriTooLong { max } => (
                "error",
                format!("the request URI is longer than {max} bytes"),
            ),
            ApiError::Internal => ("error", "internal error".to_owned()),
        };
        let mut body = String::with_capacity(text.len() + 16);
        body.push_str("{\"");
        body.push_str(key);
        body.push_str("\":");
        crate::json::push_str(&mut body, &text);
        body.push('}');
        body
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.status(), self.body())
    }
}

impl std::error::Error for ApiError {}
