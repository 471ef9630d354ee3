console.log("Hello World");
